"""A journal row's JSON as pieces, each long string written as its encoding, slice by slice.

The end of a run holds its answer several times in one row (`ProcessingComplete` carries the
result's `answer`, `results`, `messages` and `slot_messages`; `SlotCompleted` its `value` and
`text`), and the answer's message, the slot's end and the run's end are rows written within
milliseconds of each other. Dumped whole, a 1,000,000-token answer (7.9 MB) became ~60 MB of row
bytes in the last instant of the run: the run's peak memory. Here a string of `LONG` characters or
more is cut out of its row and kept as a `LongText`, the string itself (not a copy): its encoded
size is known when the row is made (the size cap), and it is encoded again `SLICE` characters at a
time as it is written. The bytes on disk are the ones `TypeAdapter.dump_json` writes (tests compare
them): JSON escapes each character on its own, so the slices' encodings join into the whole's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

from ..formats.long_strings import LONG

SLICE = 1 << 20
"""Characters encoded at a time when a long string is written (the most it ever holds encoded)."""
KEEP = 8
"""Long strings whose encoded size is remembered for the rows that follow (the run's end repeats the answer)."""


class LongText:
    """A long string of a row: its size as JSON (quotes included) and how to write it without encoding it whole."""

    __slots__ = ("size", "text")

    def __init__(self, text: str) -> None:
        """Raises `PydanticSerializationError` when `text` is not valid UTF-8 (a lone surrogate)."""
        self.text = text
        self.size = 2 + sum(len(to_json(part)) - 2 for part in _slices(text))

    def __len__(self) -> int:
        return self.size

    def write(self, write: Callable[[Any], object]) -> None:
        """Write the string's JSON (as `to_json` makes it) through `write`, one slice at a time."""
        write(b'"')
        for part in _slices(self.text):
            write(memoryview(to_json(part))[1:-1])
        write(b'"')


def _slices(text: str) -> Any:
    return (text[i : i + SLICE] for i in range(0, len(text), SLICE))


class LongStrings:
    """The `LongText` of the last `KEEP` long strings, by identity (so each is measured once)."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, LongText] = {}

    def piece(self, text: str) -> LongText:
        """`text` as a row's piece (raises `PydanticSerializationError` when it is not valid UTF-8)."""
        known = self._known.get(id(text))
        if known is not None and known.text is text:
            return known
        piece = LongText(text)
        if len(self._known) >= KEEP:
            del self._known[next(iter(self._known))]
        self._known[id(text)] = piece
        return piece

    def clear(self) -> None:
        self._known.clear()


def dump_pieces(
    adapter: TypeAdapter[Any], value: Any, long: LongStrings, *, long_free: bool = False, exclude: Any = None
) -> tuple[bytes | LongText, ...]:
    """`adapter.dump_json(value, fallback=repr, exclude=exclude)` as pieces that write those bytes (`bytes`, or a
    `LongText`).

    A row known to hold no long string (`long_free`: the caller knows it cheaply: an event's wire conversion,
    `events.json.wire_fields`, which the run's sink hands to `Journal.event`, and `messages_long_free`) is
    dumped as usual (one piece). Otherwise each long string (a dict's
    value or a list's item) is replaced in the JSON-mode data by a placeholder no text can hold (a fresh
    random name), the rest is dumped, and the dump is cut at each placeholder, where the string's
    encoding goes (a `LongText`).

    Raises:
        PydanticSerializationError: some text is not valid UTF-8 (the caller scrubs and dumps again).
    """
    if long_free:  # most rows: the walk in Python below cost more than the dump
        return (adapter.dump_json(value, fallback=repr, exclude=exclude),)
    data = adapter.dump_python(value, mode="json", fallback=repr, exclude=exclude)  # the value's own strings
    prefix = f"\x00agentcell-long-{uuid.uuid4().hex}-"
    cut: list[str] = []
    _hollow(data, cut, prefix)
    if not cut:
        return (adapter.dump_json(value, fallback=repr, exclude=exclude),)
    marker = re.compile(re.escape(to_json(prefix)[:-1]) + rb'(\d+)"')
    parts = marker.split(to_json(data))  # text, index, text, index, ..., text
    pieces = [long.piece(cut[int(part)]) if i % 2 else part for i, part in enumerate(parts)]
    return tuple(pieces)


def _hollow(data: Any, cut: list[str], prefix: str) -> None:
    """Replace every long string in `data` (JSON-mode containers, ours to change) by `prefix` + its index in `cut`."""
    stack = [data]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            if isinstance(item, str):
                if len(item) >= LONG:
                    node[key] = f"{prefix}{len(cut)}"
                    cut.append(item)
            elif isinstance(item, dict | list):
                stack.append(item)
