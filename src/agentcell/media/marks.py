"""Media in rendered text: where a `{{ fig }}` was, so the user message keeps template order.

Jinja renders text. While a slot renders, every `{{ }}` output passes through `finalize`: a plain value
is left alone (cost: one type check); a table becomes its Markdown; an image becomes a mark — a private-use
character, a random per-render nonce and the part's number — recorded in the render's `Collector`. After
rendering, `Collector.resolve(text)` cuts the text at the marks into `(readable text, pieces)`: the pieces
(`str` and media, in order) go to the model; the readable text, with `[image: a 640×480 PNG]` in place of
each mark, goes to every view. A value cannot forge a mark: it does not know the nonce.
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from .convert import may_be_media, prompt_value
from .parts import Media

_OPEN, _CLOSE = "\ue000", "\ue001"
_SCALARS = frozenset({str, int, float, bool, type(None)})

Pieces = tuple["str | Media", ...]


class Collector:
    """The media one render met, by number."""

    def __init__(self, context: Mapping[str, Any] | None = None) -> None:
        self.found: list[Media] = []
        self._context = context
        self._nonce = ""
        self._pattern: re.Pattern[str] | None = None

    @property
    def nonce(self) -> str:
        """Made at the first mark: most renders meet no media, and a fresh pattern per render cost a compile
        (~30 µs, a batch row's every slot) and pushed the notebook's own patterns out of `re`'s cache."""
        if not self._nonce:
            self._nonce = secrets.token_hex(8)
            self._pattern = re.compile(f"{_OPEN}{self._nonce}:(\\d+){_CLOSE}")
        return self._nonce

    def name_of(self, source: object) -> str:
        """The context's name for `source` (`{{ fig }}` → `fig`), so a message about it can say which value it
        was; `""` when it has none (an expression's result)."""
        if self._context is None or isinstance(source, str):
            return ""
        return next((key for key, value in self._context.items() if value is source), "")

    def mark(self, media: Media, source: object = None) -> str:
        """Keep `media` (made from `source`) and return its mark."""
        name = self.name_of(source)
        if name and name != media.name:
            media = dataclasses.replace(media, name=name)
        self.found.append(media)
        return f"{_OPEN}{self.nonce}:{len(self.found) - 1}{_CLOSE}"

    def resolve(self, text: str) -> tuple[str, Pieces]:
        """`(readable text, pieces)`; `pieces` is `()` when `text` holds no media."""
        pattern = self._pattern  # made with the nonce, at the first mark
        if not self.found or pattern is None or _OPEN not in text:
            return text, ()
        pieces: list[str | Media] = []
        readable: list[str] = []
        at = 0
        for match in pattern.finditer(text):
            before = text[at : match.start()]
            if before:
                pieces.append(before)
            readable.append(before)
            media = self.found[int(match[1])]
            pieces.append(media)
            readable.append(f"[{media.media_kind}: {media.label}]")
            at = match.end()
        if at == 0:
            return text, ()
        rest = text[at:]
        if rest:
            pieces.append(rest)
        readable.append(rest)
        return "".join(readable), tuple(pieces)

    def readable(self, text: str) -> str:
        """`text` with each mark as its label (system text, options: places that cannot hold a part)."""
        return self.resolve(text)[0]


_current: ContextVar[Collector | None] = ContextVar("agentcell_media_collector", default=None)


@contextmanager
def collecting(context: Mapping[str, Any] | None = None) -> Iterator[Collector]:
    """Media met by `finalize` while this is open are marked in the text and kept in the collector (named
    after the `context` name they were found under)."""
    collector = Collector(context)
    token = _current.set(collector)
    try:
        yield collector
    finally:
        _current.reset(token)


def finalize(value: object) -> object:
    """Jinja's `finalize`: every `{{ }}` output passes here before `str()`."""
    if type(value) in _SCALARS or not may_be_media(value):  # the common case: a type check, a module name
        return value
    collector = _current.get()
    found = prompt_value(value, name="" if collector is None else collector.name_of(value))
    if found is None or isinstance(found, str):
        return value if found is None else found
    if collector is None:  # rendered outside a slot (a quoted option): the label is what fits in a string
        return f"[{found.media_kind}: {found.label}]"
    return collector.mark(found, value)
