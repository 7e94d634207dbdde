"""The syntax tree of a cell, exactly as written: frozen, slotted values with a `kind` tag.

The parser builds these and checks only syntax; the compiler checks meaning (known types and
options, duplicate names, variables) and turns them into steps. Positions are 1-based line and
column in the cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .frozen import faster_init

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
    line: int = field(default=0, compare=False)
    """Where the value is written (a quoted one: its first character after the quote); 0 if unknown."""
    col: int = field(default=0, compare=False)
    pos: int = field(default=0, compare=False)
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


Quantifier: TypeAlias = tuple[int, int | None]
"""`(least, most)` items of a list slot: `*` is `(0, None)`, `+` `(1, None)`, `?` `(0, 1)`, `{n,m}` `(n, m)`."""


@dataclass(frozen=True, slots=True)
class Slot:
    """`[[!type{n,m}:name|options]]` or `[[@action:name|options]]` as written.

    `type`/`name` are `None` when left out; for an action, `type` is the action's name."""

    name: str | None
    type: str | None
    required: bool
    options: tuple[Option, ...]
    line: int
    col: int
    type_line: int = 0
    """Where the type was written (for "unknown type" errors); 0 when there is none."""
    type_col: int = 0
    quantifier: Quantifier | None = None
    """Set for a list slot (`[[int*:x]]`, `[[ideas{3}]]`)."""
    action: bool = False
    """`[[@name…]]`: run the action `type` (no model call)."""
    kind: Literal["slot"] = "slot"


Scope: TypeAlias = Literal["global", "local"]
Mode: TypeAlias = Literal["append", "replace"]


@dataclass(frozen=True, slots=True)
class System:
    """`<system>…</system>`, or `<system local|global|append|replace>`.

    `scope`: `global` (the default) blocks stay in force across checkpoints, `local` ones until the next
    checkpoint. `mode`: `append` (the default) adds to the blocks in force, `replace` replaces those of
    its scope (struckdown's documented semantics)."""

    body: Text
    line: int
    col: int
    scope: Scope = "global"
    mode: Mode = "append"
    kind: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class Header:
    """`<header>…</header>` (same modifiers as `<system>`): a user turn that opens every segment."""

    body: Text
    line: int
    col: int
    scope: Scope = "global"
    mode: Mode = "append"
    kind: Literal["header"] = "header"


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


@dataclass(frozen=True, slots=True)
class Together:
    """`<together>…</together>`: the slots inside run concurrently, each seeing the conversation so far."""

    nodes: tuple[Node, ...]
    line: int
    col: int
    kind: Literal["together"] = "together"


@dataclass(frozen=True, slots=True)
class Include:
    """`<include src="…"/>` or `{% include "…" %}`: another file's nodes, parsed on their own.

    Positions inside `nodes` are in the included file (`name`, `text`), so its errors point there."""

    path: str
    """The resolved path of the included file."""
    name: str
    """How errors name the file."""
    text: str = field(repr=False)
    nodes: tuple[Node, ...] = field(repr=False)
    line: int = 1
    col: int = 1
    kind: Literal["include"] = "include"


@dataclass(frozen=True, slots=True)
class Expression:
    """A Jinja expression written in a `{% if %}`/`{% elif %}`/`{% for %}` tag."""

    source: str
    line: int
    col: int
    pos: int = 0
    """Offset of its first character in the cell."""
    kind: Literal["expression"] = "expression"


@dataclass(frozen=True, slots=True)
class Branch:
    """One arm of an `{% if %}` that holds slots: `test` is `None` for `{% else %}`."""

    test: Expression | None
    nodes: tuple[Node, ...]
    line: int
    col: int
    kind: Literal["branch"] = "branch"


@dataclass(frozen=True, slots=True)
class IfBlock:
    """`{% if %}…{% elif %}…{% else %}…{% endif %}` around slots or tags: decided when reached."""

    branches: tuple[Branch, ...]
    line: int
    col: int
    kind: Literal["if"] = "if"


@dataclass(frozen=True, slots=True)
class ForBlock:
    """`{% for x in items %}…{% else %}…{% endfor %}` around slots: the body runs once per item."""

    targets: tuple[str, ...]
    """The loop variable(s) (`for k, v in …` gives two)."""
    iterable: Expression
    nodes: tuple[Node, ...]
    line: int
    col: int
    empty: tuple[Node, ...] = ()
    """The `{% else %}` body, run when there is no item."""
    test: Expression | None = None
    """`{% for x in items if test %}`: only the items for which it holds."""
    kind: Literal["for"] = "for"


Node: TypeAlias = Text | Slot | System | Header | Message | Checkpoint | Together | Include | IfBlock | ForBlock


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed cell: its top-level nodes in order."""

    nodes: tuple[Node, ...]
    kind: Literal["document"] = "document"


faster_init(
    TextPart,
    Text,
    Const,
    Dynamic,
    Option,
    Slot,
    System,
    Header,
    Message,
    Checkpoint,
    Together,
    Include,
    Expression,
    Branch,
    IfBlock,
    ForBlock,
    Document,
)
