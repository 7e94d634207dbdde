"""Tokens to a `nodes.Document`: one method per construct, syntax checks only.

Jinja is parsed here only where it carries structure: an `{% if %}` or `{% for %}` that holds a
slot, a tag or an include becomes an `IfBlock`/`ForBlock` (decided by looking ahead to its end), and
`{% include "…" %}` an `Include`. Every other Jinja block stays text, and the parser only follows its
nesting, so a slot inside a block it cannot hold is reported as such instead of surfacing later as an
obscure "unexpected end of template" from Jinja. Slot syntax is in `slots.py`.
"""

from __future__ import annotations

import re
from typing import Literal, NoReturn

from .includes import IncludeError, Includes
from .lexer import INCLUDE_SRC, Token, TokenKind
from .nodes import (
    Branch,
    Checkpoint,
    Document,
    Expression,
    ForBlock,
    Header,
    IfBlock,
    Include,
    Message,
    Mode,
    Node,
    Scope,
    System,
    Text,
    TextPart,
    Together,
)
from .slots import SlotParser
from .source import Source
from .stream import block_word

MAX_BLOCK_DEPTH = 16
"""Jinja blocks nested deeper than this are refused (Python cannot compile much deeper loops)."""

_TEXT_KINDS: frozenset[TokenKind] = frozenset({"data", "variable", "block", "comment", "raw"})
_BLOCK_TAGS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape", "set"})
_LOADING_TAGS = frozenset({"extends", "import", "from"})
_STRUCTURE: frozenset[TokenKind] = frozenset({"slot_begin", "tag_open", "tag_empty"})
_IF_STOPS = frozenset({"elif", "else", "endif"})
_TAG_INNER = re.compile(r"\{%[-+]?\s*\w+\s+(.*?)\s*[-+]?%\}\Z", re.DOTALL)
_LOOP = re.compile(r"(?P<targets>.+?)\s+in\s+(?P<iter>.+?)(?:\s+if\s+(?P<test>.+?))?", re.DOTALL)
_JINJA_INCLUDE = re.compile(r"""\{%[-+]?\s*include\s+(?:"([^"\n]*)"|'([^'\n]*)')\s*[-+]?%\}\Z""")


def parse(source: Source, *, includes: Includes | None = None) -> Document:
    """Parse the cell in `source` into a `Document`; raise `TemplateSyntaxError` at the first problem."""
    return _Parser(source, includes or Includes()).document()


class _Parser(SlotParser):
    def __init__(self, source: Source, includes: Includes) -> None:
        super().__init__(source)
        self.includes = includes
        self.stops: list[frozenset[str]] = []
        """Block words that end the body being parsed (`{% elif %}`, `{% endfor %}`, …)."""

    # -- top level ------------------------------------------------------------------------------
    def document(self) -> Document:
        nodes: list[Node] = []
        while self.current.kind != "eof":
            nodes.append(self.node())
        return Document(tuple(nodes))

    def node(self) -> Node:
        token = self.current
        if token.kind == "block":
            word = block_word(token)
            if word == "include":
                return self.jinja_include()
            if word in ("if", "for") and self.holds_structure():
                return self.if_block() if word == "if" else self.for_block()
        if token.kind in _TEXT_KINDS:
            return self.text(None)
        if token.kind == "slot_begin":
            return self.slot()
        if token.kind == "tag_open":
            return self.tag()
        if token.kind == "tag_empty" and token.value == "checkpoint":
            self.advance()
            return Checkpoint(None, *self.source.position(token.pos))
        if token.kind == "tag_empty" and token.value == "include":
            self.advance()
            match = INCLUDE_SRC.fullmatch(token.raw[len("<include") : -2])
            assert match is not None  # the lexer checked
            return self.include(match.group(1) if match.group(1) is not None else match.group(2), token)
        if token.kind == "tag_empty":
            self.fail(f"{token.raw} is empty: write <{token.value}>…</{token.value}>", token)
        if token.kind == "tag_close" and token.value == "checkpoint":
            self.fail(
                f"stray {token.raw}: a checkpoint name is plain text on one line, as in <checkpoint>Name</checkpoint>",
                token,
            )
        self.fail(f"stray {token.raw}: there is no open <{token.value}>", token)

    def tag(self) -> Node:
        name = self.current.value
        if name in ("system", "header"):
            return self.system()
        if name == "checkpoint":
            return self.checkpoint()
        if name == "together":
            return self.together()
        return self.message()

    # -- text and Jinja blocks ------------------------------------------------------------------
    def text(self, enclosing: Token | None) -> Text:
        """Text up to the next slot, tag, structural block or end; `enclosing` is the tag whose body this is."""
        start = self.current.pos
        parts: list[TextPart] = []
        data: list[Token] = []  # adjacent data tokens become one part (joined once: no quadratic +=)
        blocks: list[tuple[str, Token]] = []
        while self.current.kind in _TEXT_KINDS:
            if not blocks and self.current.kind == "block" and self.ends_text():
                break
            token = self.advance()
            if token.kind == "data":
                data.append(token)
                continue
            if data:
                self.flush_data(data, parts)
            if token.kind == "block":
                self.track_block(token, blocks)
            parts.append(self.part(token.kind, token.raw, token.pos))
        if data:
            self.flush_data(data, parts)
        if blocks:
            self.open_block_ends(blocks, enclosing)
        line, col = (parts[0].line, parts[0].col) if parts else self.source.position(start)
        return Text(tuple(parts), line, col)

    def ends_text(self) -> bool:
        """Whether the current token, outside any Jinja block of the text, starts something else."""
        word = block_word(self.current)
        if not word:
            return False
        if (self.stops and word in self.stops[-1]) or word == "include":
            return True
        return word in ("if", "for") and self.holds_structure()

    def holds_structure(self) -> bool:
        """Whether the `{% if %}`/`{% for %}` at the current token holds a slot, tag or include."""
        depth = 0
        for token in self.scan():
            if token.kind in _STRUCTURE:
                return True
            word = block_word(token)
            if word == "include":
                return True
            if word in _BLOCK_TAGS and not (word == "set" and "=" in token.raw):
                depth += 1
            elif word.startswith("end") and word[3:] in _BLOCK_TAGS:
                depth -= 1
                if depth <= 0:
                    return False
        return False

    def flush_data(self, data: list[Token], parts: list[TextPart]) -> None:
        # Where a removed comment joins `{` to `{`, `%` or `#`, the part is split, so the Jinja source
        # can keep the two apart (`Text.source`): `{<!-- -->{ x }}` is literal text, with Jinja near or not.
        if len(data) == 1:
            parts.append(self.part("data", data[0].raw, data[0].pos))
            data.clear()
            return
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
        word = block_word(token)
        if word in _LOADING_TAGS:
            self.fail(f"{{% {word} %}} is not available in a cell: a cell cannot load other templates", token)
        if word in _BLOCK_TAGS and not (word == "set" and "=" in token.raw):
            if len(blocks) + len(self.stops) >= MAX_BLOCK_DEPTH:
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

    def open_block_ends(self, blocks: list[tuple[str, Token]], enclosing: Token | None) -> NoReturn:
        word, opener = next((b for b in blocks if b[0] not in ("if", "for")), blocks[-1])
        here = self.current
        pair = f"{{% {word} %}} … {{% end{word} %}}"
        if here.kind == "eof" or (here.kind == "tag_close" and enclosing is not None and here.value == enclosing.value):
            word, opener = blocks[-1]
            before = "" if here.kind == "eof" else f" before {here.raw}"
            self.fail(f"unclosed {{% {word} %}}: add {{% end{word} %}}{before}", opener)
        what = "slots" if here.kind == "slot_begin" else here.raw
        self.fail(
            f"{what} cannot appear inside {pair}: the block opened at {self.where(opener)} is still open here",
            here,
        )

    # -- structural blocks ----------------------------------------------------------------------
    def body(self, stops: frozenset[str]) -> tuple[Node, ...]:
        """Nodes up to a block whose word is in `stops` (left current), or the end of the cell."""
        if len(self.stops) >= MAX_BLOCK_DEPTH:
            self.fail(f"Jinja blocks are nested more than {MAX_BLOCK_DEPTH} deep", self.current)
        self.stops.append(stops)
        nodes: list[Node] = []
        while self.current.kind != "eof" and block_word(self.current) not in stops:
            nodes.append(self.node())
        self.stops.pop()
        return tuple(nodes)

    def if_block(self) -> IfBlock:
        opener = self.advance()
        test: Expression | None = self.expression(opener)
        arm = opener
        branches: list[Branch] = []
        while True:
            nodes = self.body(_IF_STOPS)
            branches.append(Branch(test, nodes, *self.source.position(arm.pos)))
            arm = self.current
            if arm.kind == "eof":
                self.fail("unclosed {% if %}: add {% endif %}", opener)
            word = block_word(self.advance())
            if word == "endif":
                return IfBlock(tuple(branches), *self.source.position(opener.pos))
            if test is None:
                self.fail(f"{{% {word} %}} after {{% else %}}: the else arm must come last", arm)
            test = self.expression(arm) if word == "elif" else None

    def for_block(self) -> ForBlock:
        opener = self.advance()
        inner = self.expression(opener)
        loop = _LOOP.fullmatch(inner.source)
        if loop is None:
            self.fail("expected {% for item in items %}", opener)
        targets = tuple(name.strip() for name in loop.group("targets").strip("() ").split(","))
        if not all(name.isidentifier() for name in targets):
            message = f"a loop that holds slots names its variables plainly (for a, b in …), not {inner.source!r}"
            self.fail(message, opener)
        iterable = self.sub_expression(inner, loop.start("iter"), loop.group("iter"))
        test = None
        if loop.group("test") is not None:
            test = self.sub_expression(inner, loop.start("test"), loop.group("test"))
        nodes = self.body(frozenset({"else", "endfor"}))
        empty: tuple[Node, ...] = ()
        if block_word(self.current) == "else":
            self.advance()
            empty = self.body(frozenset({"endfor"}))
        if self.current.kind == "eof":
            self.fail("unclosed {% for %}: add {% endfor %}", opener)
        self.advance()
        line, col = self.source.position(opener.pos)
        return ForBlock(targets, iterable, nodes, line, col, empty, test)

    def expression(self, token: Token) -> Expression:
        """The expression after the tag's word (`x > 1` in `{% if x > 1 %}`)."""
        match = _TAG_INNER.match(token.raw)
        if match is None or not match.group(1).strip():
            self.fail(f"expected an expression in {token.raw}", token)
        pos = token.pos + match.start(1)
        return Expression(match.group(1), *self.source.position(pos), pos)

    def sub_expression(self, whole: Expression, offset: int, text: str) -> Expression:
        pos = whole.pos + offset
        return Expression(text, *self.source.position(pos), pos)

    # -- includes -------------------------------------------------------------------------------
    def jinja_include(self) -> Include:
        token = self.advance()
        match = _JINJA_INCLUDE.match(token.raw)
        if match is None:
            self.fail('write {% include "file.sd" %}: the file name in quotes, nothing else', token)
        return self.include(match.group(1) if match.group(1) is not None else match.group(2), token)

    def include(self, written: str, token: Token) -> Include:
        try:
            found, inner = self.includes.load(written)
        except IncludeError as exc:
            self.fail(str(exc), token)
        nodes = _Parser(Source(found.text, name=found.name), inner).document().nodes
        line, col = self.source.position(token.pos)
        return Include(str(found.path), found.name, found.text, nodes, line, col)

    # -- tags -----------------------------------------------------------------------------------
    def system(self) -> System | Header:
        opener = self.advance()
        words = opener.raw[1 + len(opener.value) : -1].split()
        scope: Scope = "local" if "local" in words else "global"
        mode: Mode = "replace" if "replace" in words else "append"
        body = self.tag_body(opener)
        line, col = self.source.position(opener.pos)
        if opener.value == "header":
            return Header(body, line, col, scope, mode)
        return System(body, line, col, scope, mode)

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
        what = "a block that holds slots or tags" if here.kind == "block" else here.raw
        self.fail(f"{what} cannot appear inside {pair}: the tag opened at {self.where(opener)}", here)

    def together(self) -> Together:
        opener = self.advance()
        nodes: list[Node] = []
        self.stops.append(frozenset())  # an enclosing block's {% else %} cannot end the text inside
        while not (self.current.kind == "tag_close" and self.current.value == "together"):
            if self.current.kind == "eof":
                self.fail("unclosed <together>: no matching </together>", opener)
            if self.current.kind == "tag_open" and self.current.value == "together":
                self.fail(f"<together> blocks cannot nest: the one at {self.where(opener)} is still open", self.current)
            nodes.append(self.node())
        self.stops.pop()
        self.advance()
        return Together(tuple(nodes), *self.source.position(opener.pos))

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
