"""A journal row's JSON as pieces, each long string encoded once and written as it is.

The end of a run holds its answer several times in one row (`ProcessingComplete` carries the
result's `answer`, `results`, `messages` and `slot_messages`; `SlotCompleted` its `value` and
`text`), and the answer's message, the slot's end and the run's end are rows written within
milliseconds of each other. Dumped whole, a 1,000,000-token answer (7.9 MB) became ~60 MB of row
bytes in the last instant of the run: the run's peak memory. Here a string of `LONG` characters or
more is cut out of its row, encoded once (the same string object in several places and rows is
encoded once: `LongStrings`) and written between the row's other pieces. The bytes on disk are the
ones `TypeAdapter.dump_json` writes (tests compare them).
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_json

LONG = 32_768
"""Strings this long (characters) or longer are encoded on their own, once."""
KEEP = 8
"""Encoded long strings kept for the rows that follow (the run's end repeats the answer's)."""


class LongStrings:
    """The encodings of the last `KEEP` long strings, by identity (the strings are kept alive with them)."""

    __slots__ = ("_encoded",)

    def __init__(self) -> None:
        self._encoded: dict[int, tuple[str, bytes]] = {}

    def encode(self, text: str) -> bytes:
        """`text` as a JSON string (quotes included), as `dump_json` writes it.

        Raises:
            PydanticSerializationError: `text` is not valid UTF-8 (a lone surrogate).
        """
        known = self._encoded.get(id(text))
        if known is not None and known[0] is text:
            return known[1]
        encoded = to_json(text)
        if len(self._encoded) >= KEEP:
            del self._encoded[next(iter(self._encoded))]
        self._encoded[id(text)] = (text, encoded)
        return encoded

    def clear(self) -> None:
        self._encoded.clear()


def dump_pieces(adapter: TypeAdapter[Any], value: Any, long: LongStrings) -> tuple[bytes, ...]:
    """`adapter.dump_json(value, fallback=repr)` as pieces whose concatenation is those bytes.

    Without a long string the row is dumped as usual (one piece). A long string (a dict's value or a
    list's item) is replaced in the JSON-mode data by a placeholder no text can hold (a fresh random
    name), the rest is dumped, and the dump is cut at each placeholder, where the string's encoding
    goes.

    Raises:
        PydanticSerializationError: some text is not valid UTF-8 (the caller scrubs and dumps again).
    """
    data = adapter.dump_python(value, mode="json", fallback=repr)  # strings are the value's own, not copies
    prefix = f"\x00agentcell-long-{uuid.uuid4().hex}-"
    cut: list[str] = []
    _hollow(data, cut, prefix)
    if not cut:
        return (adapter.dump_json(value, fallback=repr),)
    marker = re.compile(re.escape(to_json(prefix)[:-1]) + rb'(\d+)"')
    parts = marker.split(to_json(data))  # text, index, text, index, ..., text
    pieces = [long.encode(cut[int(part)]) if i % 2 else part for i, part in enumerate(parts)]
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
