"""Characters to tokens: the only stage that reads the raw cell.

The lexer knows where things start and end, not what they mean. Outside a slot it yields `data`
(plain text), the four Jinja regions (`variable` `{{ }}`, `block` `{% %}`, `comment` `{# #}`, `raw`
`{% raw %}…{% endraw %}`), and the structural tags (`tag_open`, `tag_close`, `tag_empty` for
`<system>`, `<header>`, `<user>`, `<assistant>`, `<checkpoint>`/`<obliviate>`, `<together>` and
`<include src="…"/>`; a tag's attributes stay in its `raw` text, checked here, read by the parser).
`<!-- … -->` comments are dropped here, before anything else sees them. Inside `[[ … ]]` it yields
the slot's own tokens, including `@` (an action) and quantifiers (`*`, `+`, `?`, `{n,m}`).

Jinja regions are scanned the way Jinja's own lexer scans them (string literals and balanced
brackets are skipped, so `{{ {'a': 1} }}` and `{{ "]]" }}` are one region each), which keeps our
idea of "inside Jinja" and Jinja's identical. Every loop moves forward: the lexer is linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal, NamedTuple, TypeAlias

from .source import Source

TokenKind: TypeAlias = Literal[
    "data", "variable", "block", "comment", "raw",
    "tag_open", "tag_close", "tag_empty",
    "slot_begin", "slot_end", "bang", "colon", "pipe", "comma", "equals", "at", "quant",
    "name", "word", "string", "expr", "eof",
]  # fmt: skip


class Token(NamedTuple):
    """One token. `value` is the meaning (a tag's canonical name, a string's contents); `raw` the
    exact source text; `pos` the offset of its first character."""

    kind: TokenKind
    value: str
    raw: str
    pos: int


TAG_NAMES = ("system", "header", "user", "assistant", "checkpoint", "obliviate", "together", "include")
MODIFIERS = ("local", "global", "append", "replace")
"""The words `<system …>` and `<header …>` take."""
_TAG_ALT = "|".join(TAG_NAMES)
_TEXT_SPECIAL = re.compile(rf"\[\[|\]\]|\{{[{{%#]|<(?:!--|/?(?:{_TAG_ALT})(?![\w-]))")
_TAG = re.compile(rf"<(/?)({_TAG_ALT})((?:\s[^<>]*?)?)\s*(/?)>")
INCLUDE_SRC = re.compile(r"""\s*src\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')\s*""")
_QUANTIFIER = re.compile(r"\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}")
_RAW_BEGIN = re.compile(r"\{%[-+]?\s*raw\s*[-+]?%\}")
_RAW_END = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}")
_JINJA_SPECIAL = re.compile(r"""["'()\[\]{}%]""")
_STRING = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*\"""", re.DOTALL)
_NAME = re.compile(r"[^\W\d]\w*")
_WORD = re.compile(r"""[^\s,=|\[\]{}"'][^\n,=|\[\]{}]*""")
_SLOT_STRING = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*\"""")
_PUNCT: dict[str, TokenKind] = {"!": "bang", ":": "colon", "|": "pipe", ",": "comma", "=": "equals", "@": "at"}
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_RAW_HINT = "for a literal '[[' write {% raw %}[[{% endraw %}"


def tokenize(source: Source) -> Iterator[Token]:
    """Yield the tokens of `source`, ending with one `eof` token; raise at the first lexical error."""
    return _Lexer(source).tokens()


class _Lexer:
    def __init__(self, source: Source) -> None:
        self.source = source
        self.text = source.text
        # For telling a stray `]]` from code such as `a[b[0]]`: single-bracket depth on this line.
        self.depth = 0
        self.counted = 0
        self.end = 0
        """Just past the `]]` of the slot most recently lexed."""

    def tokens(self) -> Iterator[Token]:
        text, size = self.text, len(self.text)
        pos = data_start = 0  # plain text since `data_start` is yielded as one token when something ends it
        while True:
            match = _TEXT_SPECIAL.search(text, pos)
            start = size if match is None else match.start()
            special = "" if match is None else match.group()
            if special == "]]":
                self.check_closing_brackets(start)
                pos = start + 2
                continue
            tag = None
            if special.startswith("<") and not special.startswith("<!--"):
                tag = _TAG.match(text, start)
                if tag is None:
                    pos = start + 1  # `<system` not closed by `>`: plain text
                    continue
            if start > data_start:
                data = text[data_start:start]
                yield Token("data", data, data, data_start)
            if match is None:
                break
            if special == "[[":
                yield from self.slot(start)
                pos = self.end
                self.counted = pos
            elif special == "<!--":
                pos = self.html_comment_end(start)
            elif tag is not None:
                token = self.tag(tag, start)
                yield token
                pos = tag.end()
            else:
                token = self.jinja(start)
                yield token
                pos = start + len(token.raw)
            data_start = pos
        yield Token("eof", "", "", size)

    def check_closing_brackets(self, start: int) -> None:
        """A `]]` in text is fine when it closes two `[` of the same line (`a[b[0]]`)."""
        seen = self.text[self.counted : start]
        newline = max(seen.rfind("\n"), seen.rfind("\r"))
        if newline >= 0:
            self.depth, seen = 0, seen[newline + 1 :]
        self.depth = max(self.depth + seen.count("[") - seen.count("]"), 0)
        self.counted = start + 2
        if self.depth < 2:
            self.source.fail_at("']]' without a matching '[['", start)
        self.depth -= 2

    def tag(self, tag: re.Match[str], start: int) -> Token:
        closing, name, attributes, empty = tag.groups()
        if closing and empty:
            self.source.fail_at(f"'{tag.group()}' is not a tag: write </{name}>", start)
        self.check_attributes(name, attributes, start, closing=bool(closing), empty=bool(empty))
        kind: TokenKind = "tag_close" if closing else "tag_empty" if empty else "tag_open"
        canonical = "checkpoint" if name == "obliviate" else name
        return Token(kind, canonical, tag.group(), start)

    def check_attributes(self, name: str, attributes: str, start: int, *, closing: bool, empty: bool) -> None:
        """A tag's attributes: modifiers on `<system>`/`<header>`, `src` on `<include/>`, else none."""
        if not attributes and name != "include":
            return
        words = attributes.split()
        literally = "to show the tag literally, wrap it in {% raw %}…{% endraw %}"
        if name == "include":
            if closing or not empty or INCLUDE_SRC.fullmatch(attributes) is None:
                self.source.fail_at(f'an include is written <include src="file.sd"/> ({literally})', start)
        elif words and name in ("system", "header") and not closing:
            unknown = [word for word in words if word not in MODIFIERS]
            if unknown:
                self.source.fail_at(
                    f"<{name}> takes the modifiers {', '.join(MODIFIERS)}, not {unknown[0]!r} ({literally})", start
                )
            if {"local", "global"} <= set(words) or {"append", "replace"} <= set(words):
                self.source.fail_at(f"<{name} {' '.join(words)}> contradicts itself: keep one of each pair", start)
        elif words:
            self.source.fail_at(f"<{name}> takes no attributes: write <{name}> ({literally})", start)

    def html_comment_end(self, start: int) -> int:
        end = self.text.find("-->", start + 4)
        if end < 0:
            self.source.fail_at("unclosed comment: '<!--' has no matching '-->'", start)
        return end + 3

    def jinja(self, start: int) -> Token:
        """The Jinja region starting at `start` (`{{`, `{%` or `{#`)."""
        text = self.text
        opener = text[start : start + 2]
        if opener == "{#":
            end = text.find("#}", start + 2)
            if end < 0:
                self.source.fail_at("unclosed Jinja comment: '{#' has no matching '#}'", start)
            region = text[start : end + 2]
            return Token("comment", region, region, start)
        if opener == "{%":
            raw = _RAW_BEGIN.match(text, start)
            if raw is not None:
                close = _RAW_END.search(text, raw.end())
                if close is None:
                    self.source.fail_at("unclosed {% raw %}: no matching {% endraw %}", start)
                region = text[start : close.end()]
                return Token("raw", region, region, start)
        end = self.jinja_end(start, "}}" if opener == "{{" else "%}")
        kind: TokenKind = "variable" if opener == "{{" else "block"
        region = text[start:end]
        return Token(kind, region, region, start)

    def jinja_end(self, start: int, closer: str) -> int:
        """The offset just past the `}}`/`%}` that closes the region opened at `start`."""
        text, pos, stack = self.text, start + 2, list[str]()
        if text.find(closer, pos) < 0:  # fail fast (and linearly) when no closer exists at all
            self.source.fail_at(f"unclosed '{text[start : start + 2]}': no matching '{closer}'", start)
        while True:
            match = _JINJA_SPECIAL.search(text, pos)
            if match is None:
                self.source.fail_at(f"unclosed '{text[start : start + 2]}': no matching '{closer}'", start)
            pos, char = match.start(), match.group()
            if char in "\"'":
                string = _STRING.match(text, pos)
                if string is None:
                    self.source.fail_at(f"unterminated string in '{text[start : start + 2]} … {closer}'", pos)
                pos = string.end()
            elif not stack and text.startswith(closer, pos):
                return pos + 2
            elif char in "([{":
                stack.append(char)
                pos += 1
            elif char in _CLOSERS:
                if stack:
                    stack.pop()
                pos += 1
            else:
                pos += 1

    def slot(self, start: int) -> Iterator[Token]:
        """Tokens of the slot opened by the `[[` at `start`; sets `self.end` past its `]]`."""
        yield Token("slot_begin", "[[", "[[", start)
        text, pos, in_options = self.text, start + 2, False
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                self.source.fail_at("unclosed slot: '[[' has no matching ']]'", start)
            if text.startswith("]]", pos):
                yield Token("slot_end", "]]", "]]", pos)
                self.end = pos + 2
                return
            if text.startswith("[[", pos):
                line, col = self.source.position(start)
                self.source.fail_at(
                    f"'[[' inside a slot: the slot opened at line {line}, column {col} is not closed with ']]'",
                    pos,
                )
            if text.startswith("<!--", pos):
                pos = self.html_comment_end(pos)
                continue
            if text.startswith("{{", pos):
                end = self.jinja_end(pos, "}}")
                region = text[pos:end]
                yield Token("expr", region, region, pos)
                pos = end
                continue
            char = text[pos]
            if not in_options and (char in "*+?" or char == "{"):
                token = self.quantifier(pos)
                yield token
                pos += len(token.raw)
                continue
            if char in _PUNCT and not (in_options and char == "@"):
                in_options = in_options or char == "|"
                yield Token(_PUNCT[char], char, char, pos)
                pos += 1
                continue
            token = self.slot_word(pos, in_options)
            yield token
            pos += len(token.raw)

    def quantifier(self, pos: int) -> Token:
        """`*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}` (the value is normalised to `{least,most}`)."""
        char = self.text[pos]
        if char != "{":
            return Token("quant", {"*": "0,", "+": "1,", "?": "0,1"}[char], char, pos)
        match = _QUANTIFIER.match(self.text, pos)
        if match is None:
            self.source.fail_at(
                "a quantifier is written {n}, {n,} or {n,m} with whole numbers (e.g. [[ideas{3}]]); "
                "it cannot be a {{ }} value",
                pos,
            )
        least, comma, most = match.groups()
        value = f"{int(least)},{'' if comma and not most else int(most or least)}"
        return Token("quant", value, match.group(), pos)

    def slot_word(self, pos: int, in_options: bool) -> Token:
        text = self.text
        if not in_options:
            name = _NAME.match(text, pos)
            if name is None:
                self.source.fail_at(
                    f"unexpected {text[pos]!r} in a slot name: use letters, digits and '_' ({_RAW_HINT})",
                    pos,
                )
            return Token("name", name.group(), name.group(), pos)
        if text[pos] in "\"'":
            string = _SLOT_STRING.match(text, pos)
            if string is None:
                self.source.fail_at("unterminated string in slot options (strings end on their line)", pos)
            raw = string.group()
            return Token("string", _unquote(raw), raw, pos)
        word = _WORD.match(text, pos)
        if word is None:
            self.source.fail_at(f"unexpected {text[pos]!r} in slot options", pos)
        raw = word.group().rstrip()
        return Token("word", raw, raw, pos)


def _unquote(raw: str) -> str:
    """The contents of a quoted option value: `\\"`, `\\'` and `\\\\` are escapes; any other backslash
    stays (so `pattern="\\d{3}"` keeps its `\\d`)."""
    body, out, index = raw[1:-1], [], 0
    while index < len(body):
        if body[index] == "\\" and index + 1 < len(body) and body[index + 1] in "\\\"'":
            index += 1
        out.append(body[index])
        index += 1
    return "".join(out)
