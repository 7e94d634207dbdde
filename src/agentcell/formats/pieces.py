"""How the stores of a run's streamed text keep it: pieces, joined into chunks only when small.

A long answer arrives as many pieces. Kept one string object per token it would cost ~50 bytes of
overhead a token, so the stores (the run's log, the transcript, the widget's log) join every `CHUNK`
pieces into one string. Pieces that are long already (a fast stream merged by the engine,
`engine/coalesce.py`) are kept as they are: their overhead is small, and the same string objects are
then shared by every store, where a join would give each store its own copy of the text.
"""

from __future__ import annotations

CHUNK = 1024
"""Small pieces are joined into one string every this many (no join copies more than a chunk)."""
LARGE = 256
"""Pieces this long on average (characters) are kept as they are."""


def worth_joining(pieces: list[str]) -> bool:
    """Whether these pieces are small enough to be joined into one string (see `LARGE`)."""
    return sum(map(len, pieces)) < LARGE * len(pieces)
