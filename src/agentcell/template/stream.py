"""The parser's view of the token stream: one token of lookahead, more on demand, and located failures.

`scan()` looks as far ahead as a question needs (does this `{% if %}` hold a slot?) and keeps what it
read for the parser, so every token is still lexed once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NoReturn

from .lexer import Token, TokenKind, tokenize
from .source import Source

_BLOCK_WORD = re.compile(r"\{%[-+]?\s*(\w*)")


def block_word(token: Token) -> str:
    """The first word of a `{% … %}` token (`if`, `endfor`, …); `""` for any other token."""
    if token.kind != "block":
        return ""
    match = _BLOCK_WORD.match(token.raw)
    return match.group(1) if match else ""


class TokenStream:
    """Tokens of one source with lookahead; `fail()` raises `TemplateSyntaxError` at a token."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._tokens = tokenize(source)
        self._buffer: list[Token] = []
        self._head = 0
        self.current = next(self._tokens)

    def advance(self) -> Token:
        token = self.current
        if not self._buffer:  # the common case: nothing looked ahead
            if token.kind != "eof":
                self.current = next(self._tokens)
            return token
        if token.kind != "eof":
            if self._head < len(self._buffer):
                self.current = self._buffer[self._head]
                self._head += 1
                if self._head == len(self._buffer):
                    self._buffer.clear()
                    self._head = 0
            else:
                self.current = next(self._tokens)
        return token

    def peek(self) -> Token:
        for index, token in enumerate(self.scan()):
            if index == 1:
                return token
        return self.current

    def scan(self) -> Iterator[Token]:
        """The current token and those after it, up to `eof`; what is read stays for `advance()`."""
        yield self.current
        if self.current.kind == "eof":
            return
        index = self._head
        while True:
            if index == len(self._buffer):
                self._buffer.append(next(self._tokens))
            token = self._buffer[index]
            index += 1
            yield token
            if token.kind == "eof":
                return

    def at(self, kind: TokenKind) -> bool:
        """Whether the current token is a `kind` (a call, so type narrowing does not stick)."""
        return self.current.kind == kind

    def fail(self, message: str, token: Token) -> NoReturn:
        self.source.fail_at(message, token.pos)

    def where(self, token: Token) -> str:
        line, col = self.source.position(token.pos)
        return f"line {line}, column {col}"

    @staticmethod
    def describe(token: Token) -> str:
        if token.kind == "eof":
            return "end of cell"
        raw = token.raw if len(token.raw) <= 30 else token.raw[:27] + "..."
        return repr(raw)
