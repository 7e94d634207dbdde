"""Slot syntax: `[[!type{n,m}:name|options]]` and `[[@action:name|options]]` to a `nodes.Slot`.

Grammar (whitespace allowed between any two tokens):

    slot       = "[[" "!"? head? ("|" options)? "]]"
    head       = "@" NAME (":" NAME?)?              an action: key = NAME after ':', else the action's
               | NAME quantifier? (":" NAME?)?      a type and a name, or a bare name
    quantifier = "*" | "+" | "?" | "{" n "}" | "{" n ",}" | "{" n "," m "}"
    options    = option ("," option)*
    option     = (WORD "=")? (WORD | STRING | "{{ expr }}")
"""

from __future__ import annotations

from .lexer import Token
from .nodes import Const, Dynamic, Option, OptionValue, Quantifier, Slot
from .stream import TokenStream


class SlotParser(TokenStream):
    """The slot half of the parser (the rest is in `parser.py`)."""

    def slot(self) -> Slot:
        begin = self.advance()
        required = self.at("bang")
        if required:
            self.advance()
        action = self.at("at")
        if action:
            at = self.advance()
            if required:
                self.fail("an action takes no '!': write [[@name:var]]", at)
            if not self.at("name"):
                self.fail("expected an action name after '@' (e.g. [[@fetch:page|url=\"…\"]])", self.current)
        if self.at("colon"):
            self.fail("expected a slot type before ':' (e.g. [[json:plan]])", self.current)
        name, kind, quantifier, expected = self.head(action)
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
        written = kind.value if kind else None
        return Slot(name, written, required, options, line, col, type_line, type_col, quantifier, action)

    def head(self, action: bool) -> tuple[str | None, Token | None, Quantifier | None, str]:
        """`(name, type token, quantifier, what may follow)` of the part before `|`."""
        name: str | None = None
        kind: Token | None = None
        quantifier: Quantifier | None = None
        expected = "a name, a type or ']]'"
        if not self.at("name"):
            if self.at("quant"):
                self.fail("a quantifier follows a type or a name, as in [[int*:x]] or [[ideas{3}]]", self.current)
            return name, kind, quantifier, expected
        first = self.advance()
        expected = "':', '|' or ']]'"
        if self.at("quant"):
            if action:
                self.fail("an action runs once: it takes no quantifier", self.current)
            quantifier = self.quantifier(self.advance())
        if self.at("colon"):
            self.advance()
            kind, expected = first, "a name, '|' or ']]'"
            if self.at("name"):
                name, expected = self.advance().value, "'|' or ']]'"
                if self.at("quant"):
                    self.fail(f"a quantifier goes before the ':' (write [[{first.value}{self.current.raw}:{name}]])",
                              self.current)  # fmt: skip
        elif action:
            kind, name = first, first.value
        else:
            name = first.value
        return name, kind, quantifier, expected

    def quantifier(self, token: Token) -> Quantifier:
        least, most = token.value.split(",")
        bounds = (int(least), int(most) if most else None)
        if bounds[1] is not None and bounds[1] < bounds[0]:
            self.fail(f"{token.raw} asks for at least {bounds[0]} and at most {bounds[1]} items", token)
        return bounds

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
        after = self.current  # the token after "=" (read anew: mypy would keep `self.current.kind == "equals"`)
        if after.kind in ("comma", "slot_end"):
            self.fail(f"option '{token.value}' has no value after '='", token)
        if after.kind not in ("word", "string", "expr"):
            self.fail(f"unexpected {self.describe(after)} after '{token.value}='", after)
        return Option(token.value, self.value(self.advance()), line, col)

    def value(self, token: Token) -> OptionValue:
        if token.kind == "expr":
            return Dynamic(token.raw, *self.source.position(token.pos), token.pos)
        line, col = self.source.position(token.pos)
        quoted = token.kind == "string"
        # A quoted value keeps where its text starts (after the quote), for errors in its `{{ }}`.
        shift = 1 if quoted else 0
        return Const(token.value, quoted=quoted, line=line, col=col + shift, pos=token.pos + shift)

    def misplaced(self, token: Token) -> str:
        if token.kind == "comma":
            return "empty option: remove the extra ','"
        if token.kind == "pipe":
            return "a slot has one '|': separate its options with ','"
        if token.kind == "equals":
            return "expected an option name before '='"
        return f"unexpected {self.describe(token)} in slot options"
