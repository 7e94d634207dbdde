"""`Pieces`: the transcript's growing text (an answer streamed in a round, a thinking item)."""

from __future__ import annotations

from ..formats.pieces import CHUNK, worth_joining


class Pieces:
    """Text that grows by appending: kept as pieces and joined when read (never copied per token)."""

    __slots__ = ("_parts", "_small")

    def __init__(self, text: str = "") -> None:
        self._parts = [text] if text else []
        self._small = 0

    def append(self, text: str) -> None:
        self._parts.append(text)
        self._small += 1
        if self._small >= CHUNK:  # the last CHUNK pieces become one string: O(1) amortized per piece
            if worth_joining(self._parts[-CHUNK:]):
                self._parts[-CHUNK:] = ["".join(self._parts[-CHUNK:])]
            self._small = 0

    def __str__(self) -> str:
        if len(self._parts) > 1:
            self._parts, self._small = ["".join(self._parts)], 0
        return self._parts[0] if self._parts else ""

    def __bool__(self) -> bool:
        return any(self._parts)
