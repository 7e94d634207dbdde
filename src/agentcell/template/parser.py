"""Tokens to a `nodes.Document`: one method per construct, syntax checks only.

Jinja is not parsed here, only tracked: the parser follows `{% if %}`/`{% for %}`/… nesting so that
a slot or tag inside a Jinja block is reported as such, instead of surfacing later as an obscure
"unexpected end of template" from Jinja.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Literal, NoReturn

from .lexer import Token, TokenKind, tokenize
from .nodes import (
    Checkpoint,
    Const,
    Document,
    Dynamic,
    Message,
    Node,
    Option,
    OptionValue,
    Slot,
    System,
    Text,
    TextPart,
)
from .source import Source

MAX_BLOCK_DEPTH = 16
"""Jinja blocks nested deeper than this are refused (Python cannot compile much deeper loops)."""

_TEXT_KINDS: frozenset[TokenKind] = frozenset({"data", "variable", "block", "comment", "raw"})
_BLOCK_WORD = re.compile(r"\{%[-+]?\s*(\w*)")
_BLOCK_TAGS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape", "set"})
_LOADING_TAGS = frozenset({"extends", "include", "import", "from"})


def parse(source: Source) -> Document:
    """Parse the cell in `source` into a `Document`; raise `TemplateSyntaxError` at the first problem."""
    return _Parser(source).document()


class _Parser:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.buffer: deque[Token] = deque()
        self.current = next(self.tokens)

    # -- token stream ---------------------------------------------------------------------------
    def advance(self) -> Token:
        token = self.current
        if token.kind != "eof":
            self.current = self.buffer.popleft() if self.buffer else next(self.tokens)
        return token

    def peek(self) -> Token:
        if self.current.kind == "eof":
            return self.current
        if not self.buffer:
            self.buffer.append(next(self.tokens))
        return self.buffer[0]

    def at(self, kind: TokenKind) -> bool:
        """Whether the current token is a `kind` (a call, so type narrowing does not stick)."""
        return self.current.kind == kind

    def fail(self, message: str, token: Token) -> NoReturn:
        self.source.fail_at(message, token.pos)

    def where(self, token: Token) -> str:
        line, col = self.source.position(token.pos)
        return f"line {line}, column {col}"

    # -- top level ------------------------------------------------------------------------------
    def document(self) -> Document:
        nodes: list[Node] = []
        while self.current.kind != "eof":
            nodes.append(self.node())
        return Document(tuple(nodes))

    def node(self) -> Node:
        token = self.current
        if token.kind in _TEXT_KINDS:
            return self.text(None)
        if token.kind == "slot_begin":
            return self.slot()
        if token.kind == "tag_open":
            if token.value == "system":
                return self.system()
            if token.value == "checkpoint":
                return self.checkpoint()
            return self.message()
        if token.kind == "tag_empty" and token.value == "checkpoint":
            self.advance()
            return Checkpoint(None, *self.source.position(token.pos))
        if token.kind == "tag_empty":
            self.fail(f"{token.raw} is empty: write <{token.value}>…</{token.value}>", token)
        if token.kind == "tag_close" and token.value == "checkpoint":
            self.fail(
                f"stray {token.raw}: a checkpoint name is plain text on one line, as in <checkpoint>Name</checkpoint>",
                token,
            )
        self.fail(f"stray {token.raw}: there is no open <{token.value}>", token)

    # -- text and Jinja blocks ------------------------------------------------------------------
    def text(self, enclosing: Token | None) -> Text:
        """Text up to the next slot, tag or end; `enclosing` is the tag whose body this is."""
        start = self.current.pos
        parts: list[TextPart] = []
        data: list[Token] = []  # adjacent data tokens become one part (joined once: no quadratic +=)
        blocks: list[tuple[str, Token]] = []
        while self.current.kind in _TEXT_KINDS:
            token = self.advance()
            if token.kind == "data":
                data.append(token)
                continue
            self.flush_data(data, parts)
            if token.kind == "block":
                self.track_block(token, blocks)
            parts.append(self.part(token.kind, token.raw, token.pos))
        self.flush_data(data, parts)
        if blocks:
            self.open_block_ends(blocks[-1], enclosing)
        line, col = (parts[0].line, parts[0].col) if parts else self.source.position(start)
        return Text(tuple(parts), line, col)

    def flush_data(self, data: list[Token], parts: list[TextPart]) -> None:
        # Where a removed comment joins `{` to `{`, `%` or `#`, the part is split, so the Jinja source
        # can keep the two apart (`Text.source`): `{<!-- -->{ x }}` is literal text, with Jinja near or not.
        start = 0
        for index in range(1, len(data) + 1):
            if index < len(data) and not (data[index - 1].raw.endswith("{") and data[index].raw[:1] in "{%#"):
                continue
            run = data[start:index]
            raw = run[0].raw if len(run) == 1 else "".join(token.raw for token in run)
            parts.append(self.part("data", raw, run[0].pos))
            start = index
        data.clear()

    def part(self, kind: TokenKind, raw: str, pos: int) -> TextPart:
        line, col = self.source.position(pos)
        return TextPart(kind, raw, line, col, pos)  # type: ignore[arg-type]  # kind is a text kind here

    def track_block(self, token: Token, blocks: list[tuple[str, Token]]) -> None:
        match = _BLOCK_WORD.match(token.raw)
        word = match.group(1) if match else ""
        if word in _LOADING_TAGS:
            self.fail(f"{{% {word} %}} is not available in a cell: a cell cannot load other templates", token)
        if word in _BLOCK_TAGS and not (word == "set" and "=" in token.raw):
            if len(blocks) >= MAX_BLOCK_DEPTH:
                self.fail(f"Jinja blocks are nested more than {MAX_BLOCK_DEPTH} deep", token)
            blocks.append((word, token))
        elif word.startswith("end") and word[3:] in _BLOCK_TAGS:
            if not blocks:
                self.fail(f"{{% {word} %}} has no matching {{% {word[3:]} %}}", token)
            opened, opener = blocks[-1]
            if opened != word[3:]:
                self.fail(
                    f"{{% {word} %}} does not close the {{% {opened} %}} at {self.where(opener)}",
                    token,
                )
            blocks.pop()

    def open_block_ends(self, block: tuple[str, Token], enclosing: Token | None) -> NoReturn:
        word, opener = block
        here = self.current
        pair = f"{{% {word} %}} … {{% end{word} %}}"
        if here.kind == "slot_begin":
            self.fail(
                f"slots cannot appear inside {pair} (v1): the block opened at {self.where(opener)} is still open here",
                here,
            )
        if here.kind == "eof" or (here.kind == "tag_close" and enclosing is not None and here.value == enclosing.value):
            before = "" if here.kind == "eof" else f" before {here.raw}"
            self.fail(f"unclosed {{% {word} %}}: add {{% end{word} %}}{before}", opener)
        self.fail(
            f"{here.raw} cannot appear inside {pair} (v1): the block opened at {self.where(opener)} is still open here",
            here,
        )

    # -- tags -----------------------------------------------------------------------------------
    def system(self) -> System:
        opener = self.advance()
        body = self.tag_body(opener)
        return System(body, *self.source.position(opener.pos))

    def message(self) -> Message:
        opener = self.advance()
        body = self.tag_body(opener)
        role: Literal["user", "assistant"] = "user" if opener.value == "user" else "assistant"
        return Message(role, body, *self.source.position(opener.pos))

    def tag_body(self, opener: Token) -> Text:
        body = self.text(opener)
        here = self.current
        pair = f"<{opener.value}> … </{opener.value}>"
        if here.kind == "tag_close" and here.value == opener.value:
            self.advance()
            return body
        if here.kind == "eof":
            self.fail(f"unclosed {opener.raw}: no matching </{opener.value}>", opener)
        if here.kind == "slot_begin":
            self.fail(f"slots cannot appear inside {pair}: the tag opened at {self.where(opener)}", here)
        if here.kind == "tag_close":
            self.fail(f"unexpected {here.raw}: the {opener.raw} at {self.where(opener)} is still open", here)
        self.fail(f"{here.raw} cannot appear inside {pair}: the tag opened at {self.where(opener)}", here)

    def checkpoint(self) -> Checkpoint:
        opener = self.advance()
        line, col = self.source.position(opener.pos)
        if self.current.kind == "tag_close" and self.current.value == "checkpoint":
            self.advance()
            return Checkpoint(None, line, col)
        after = self.peek()
        named = (
            self.current.kind == "data"
            and "\n" not in self.current.value
            and "\r" not in self.current.value
            and after.kind == "tag_close"
            and after.value == "checkpoint"
        )
        if not named:
            return Checkpoint(None, line, col)
        name = self.advance().value.strip()
        self.advance()
        return Checkpoint(name or None, line, col)

    # -- slots ----------------------------------------------------------------------------------
    def slot(self) -> Slot:
        begin = self.advance()
        required = self.at("bang")
        if required:
            self.advance()
        name: str | None = None
        kind: Token | None = None
        expected = "a name, a type or ']]'"
        if self.at("colon"):
            self.fail("expected a slot type before ':' (e.g. [[json:plan]])", self.current)
        if self.at("name"):
            first = self.advance()
            expected = "':', '|' or ']]'"
            if self.at("colon"):
                self.advance()
                kind, expected = first, "a name, '|' or ']]'"
                if self.at("name"):
                    name, expected = self.advance().value, "'|' or ']]'"
            else:
                name = first.value
        options: tuple[Option, ...] = ()
        if self.at("pipe"):
            self.advance()
            options = self.options()
        if not self.at("slot_end"):
            self.fail(f"unexpected {self.describe(self.current)} in slot: expected {expected}", self.current)
        self.advance()
        if name is None and kind is None:
            self.fail("empty slot: write a name ([[answer]]) or a type ([[json:]])", begin)
        line, col = self.source.position(begin.pos)
        type_line, type_col = self.source.position(kind.pos) if kind else (0, 0)
        return Slot(name, kind.value if kind else None, required, options, line, col, type_line, type_col)

    def options(self) -> tuple[Option, ...]:
        options: list[Option] = []
        while True:
            token = self.current
            if token.kind == "slot_end":
                if not options:
                    self.fail("expected options after '|'", token)
                break
            if token.kind not in ("word", "string", "expr"):
                self.fail(self.misplaced(token), token)
            options.append(self.option())
            if self.current.kind == "comma":
                self.advance()
                continue
            if self.current.kind != "slot_end":
                self.fail(f"expected ',' or ']]' after an option, found {self.describe(self.current)}", self.current)
        return tuple(options)

    def option(self) -> Option:
        token = self.advance()
        line, col = self.source.position(token.pos)
        if token.kind != "word" or self.current.kind != "equals":
            return Option(None, self.value(token), line, col)
        self.advance()
        if self.current.kind in ("comma", "slot_end"):
            self.fail(f"option '{token.value}' has no value after '='", token)
        if self.current.kind not in ("word", "string", "expr"):
            self.fail(f"unexpected {self.describe(self.current)} after '{token.value}='", self.current)
        return Option(token.value, self.value(self.advance()), line, col)

    def value(self, token: Token) -> OptionValue:
        if token.kind == "expr":
            return Dynamic(token.raw, *self.source.position(token.pos), token.pos)
        return Const(token.value, quoted=token.kind == "string")

    def misplaced(self, token: Token) -> str:
        if token.kind == "comma":
            return "empty option: remove the extra ','"
        if token.kind == "pipe":
            return "a slot has one '|': separate its options with ','"
        if token.kind == "equals":
            return "expected an option name before '='"
        return f"unexpected {self.describe(token)} in slot options"

    @staticmethod
    def describe(token: Token) -> str:
        if token.kind == "eof":
            return "end of cell"
        raw = token.raw if len(token.raw) <= 30 else token.raw[:27] + "..."
        return repr(raw)
