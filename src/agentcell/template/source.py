"""The cell text being compiled: offsets to line/column, and the one `fail()` every stage raises through.

Lines are counted the way `TemplateSyntaxError.__str__` prints them (`str.splitlines`), so the caret
always sits under the character the message names. Columns are 1-based code points.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import NoReturn

from ..errors import TemplateSyntaxError


class Source:
    """A cell's text plus its name; maps offsets to positions and raises located errors."""

    __slots__ = ("_starts", "name", "text")

    def __init__(self, text: str, *, name: str = "<cell>") -> None:
        self.text = text
        self.name = name
        starts = [0]
        offset = 0
        # splitlines() is linear and agrees with the error printer on what a line break is.
        for line in text.splitlines(keepends=True):
            offset += len(line)
            starts.append(offset)
        self._starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of `offset`."""
        # An offset at the very end of a text ending in a newline is on the (empty) line after it.
        index = bisect_right(self._starts, offset) - 1  # at most len - 1: bisect never passes the end
        return index + 1, offset - self._starts[index] + 1

    def fail(self, message: str, line: int, col: int) -> NoReturn:
        """Raise the `TemplateSyntaxError` for `message` at `line`, `col`."""
        raise TemplateSyntaxError(message, line=line, col=col, source=self.text, name=self.name)

    def fail_at(self, message: str, offset: int) -> NoReturn:
        """Raise the `TemplateSyntaxError` for `message` at `offset`."""
        line, col = self.position(offset)
        self.fail(message, line, col)
