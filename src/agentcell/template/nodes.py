"""The syntax tree of a cell, exactly as written: frozen, slotted values with a `kind` tag.

The parser builds these and checks only syntax; the compiler checks meaning (known types and
options, duplicate names, variables) and turns them into steps. Positions are 1-based line and
column in the cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

TextPartKind: TypeAlias = Literal["data", "variable", "block", "comment", "raw"]


@dataclass(frozen=True, slots=True)
class TextPart:
    """A run of plain text, or one Jinja region (`{{ }}`, `{% %}`, `{# #}`, `{% raw %}…`)."""

    kind: TextPartKind
    source: str
    """The exact text, delimiters included."""
    line: int
    col: int
    pos: int
    """Offset of the first character in the cell."""


@dataclass(frozen=True, slots=True)
class Text:
    """Text with Jinja in it, between two structural tokens (slot, tag or end of cell).

    Its Jinja blocks open and close inside it: a block never spans a slot or a tag."""

    parts: tuple[TextPart, ...]
    line: int
    col: int
    kind: Literal["text"] = "text"

    @property
    def source(self) -> str:
        """The Jinja source of this text (HTML comments already removed).

        Two data parts meet where a comment was removed; `{<!-- -->{ x }}` must not become the Jinja
        `{{ x }}` there (alone it is literal text), so a `{` that would open Jinja with the next part
        is written as the expression `{{ "{" }}`.
        """
        out: list[str] = []
        for part, after in zip(self.parts, (*self.parts[1:], None), strict=True):
            text = part.source
            if (
                part.kind == "data"
                and after is not None
                and after.kind == "data"
                and text.endswith("{")
                and after.source[:1] in ("{", "%", "#")
            ):
                text = text[:-1] + '{{ "{" }}'
            out.append(text)
        return "".join(out)


@dataclass(frozen=True, slots=True)
class Const:
    """An option value written literally: a bare word (`true`, `3`, `gpt-4o`) or a quoted string."""

    text: str
    quoted: bool = False
    kind: Literal["const"] = "const"


@dataclass(frozen=True, slots=True)
class Dynamic:
    """An option value written as `{{ expr }}`, evaluated when the slot is reached."""

    source: str
    """The region as written, `{{` and `}}` included."""
    line: int
    col: int
    pos: int
    kind: Literal["dynamic"] = "dynamic"

    @property
    def expression(self) -> str:
        """The expression between the delimiters (whitespace-control marks dropped)."""
        inner = self.source[2:-2]
        if inner[:1] in ("-", "+"):
            inner = inner[1:]
        if inner[-1:] in ("-", "+"):
            inner = inner[:-1]
        return inner


OptionValue: TypeAlias = Const | Dynamic


@dataclass(frozen=True, slots=True)
class Option:
    """`key=value`, or a positional value (`key is None`): a bare word, string or `{{ expr }}`."""

    key: str | None
    value: OptionValue
    line: int
    col: int
    kind: Literal["option"] = "option"


@dataclass(frozen=True, slots=True)
class Slot:
    """`[[!type:name|options]]` as written; `type`/`name` are `None` when left out."""

    name: str | None
    type: str | None
    required: bool
    options: tuple[Option, ...]
    line: int
    col: int
    type_line: int = 0
    """Where the type was written (for "unknown type" errors); 0 when there is none."""
    type_col: int = 0
    kind: Literal["slot"] = "slot"


@dataclass(frozen=True, slots=True)
class System:
    """`<system>…</system>`."""

    body: Text
    line: int
    col: int
    kind: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class Message:
    """`<user>…</user>` or `<assistant>…</assistant>`: an explicit turn."""

    role: Literal["user", "assistant"]
    body: Text
    line: int
    col: int
    kind: Literal["message"] = "message"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """`<checkpoint>`, `<checkpoint/>`, `<checkpoint>Name</checkpoint>` (or `<obliviate>`)."""

    name: str | None
    line: int
    col: int
    kind: Literal["checkpoint"] = "checkpoint"


Node: TypeAlias = Text | Slot | System | Message | Checkpoint


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed cell: its top-level nodes in order."""

    nodes: tuple[Node, ...]
    kind: Literal["document"] = "document"
