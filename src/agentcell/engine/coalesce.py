"""Streamed text merged before it fans out: one text delta per `INTERVAL` of streaming, not one per token.

Every event a run emits goes to the run's log, its transcript, each view (the widget, a printer) and
the journal; none of them needs the model's tokens one by one (the widget sends ≤ 25 batches a second,
the journal writes every 0.2 s). A fast stream (a scripted or local model: thousands of tokens a second)
made each of them pay per token: a `TokenDelta`, a reducer step, a wire dict, a journal row (a
1,000,000-token answer wrote 120 MB of rows and hit the journal's 64 MB cap half way). So the run's sink
gathers consecutive text of one slot, round and kind here and emits it as **one** delta.

The merging is **leading-edge**: a piece that arrives when no text was emitted for `INTERVAL` (20 ms)
goes out at once, so the first token of an answer, and every token of a model slower than one per
20 ms (most hosted models), is never held. Only a burst waits: a piece that arrives less than
`INTERVAL` after the last emitted delta is held, with the ones after it, until

* `INTERVAL` passed since that delta (a timer on the run's loop), or
* any other event is emitted (`flush` first, so the order of events never changes: a retraction, a
  tool call, a Stop, the slot's end all follow the text shown before them), or
* text of another slot, round or kind arrives.

So a fast stream still makes at most one delta per `INTERVAL`, and readers see a held piece at most
20 ms later. Without a running loop (no timer) nothing is held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from ..events import ThinkingDelta, TokenDelta

INTERVAL = 0.02
"""Seconds between two emitted text deltas at the least (a piece after a longer gap goes out at once)."""

DeltaKind = type[TokenDelta] | type[ThinkingDelta]
Watcher = Callable[[str, int, list[str]], None]
"""`(text, round, parts)`: answer text of one slot merged from `parts` (the pieces as added), as emitted."""


class Timers(Protocol):
    """What the coalescer needs of a loop: its clock and a timer (an `asyncio` loop; a fake one in tests)."""

    def time(self) -> float: ...
    def call_later(self, delay: float, callback: Callable[[], object], /) -> asyncio.TimerHandle: ...


class TextCoalescer:
    """Pending text deltas of one run, emitted merged through `emit` (see the module docstring)."""

    __slots__ = ("_emit", "_kind", "_last", "_loop", "_parts", "_round", "_run_id", "_slot", "_timer", "_watchers",
                 "batches")

    def __init__(
        self, run_id: str, emit: Callable[[TokenDelta | ThinkingDelta], None], *, loop: Timers | None = None
    ) -> None:
        self._run_id = run_id
        self._loop = loop
        """The clock and timers (default: the running loop, looked up when first needed)."""
        self._last = float("-inf")
        """The loop's time when the last delta was emitted."""
        self._emit = emit
        self._parts: list[str] = []
        self._kind: DeltaKind = TokenDelta
        self._slot = ""
        self._round = 0
        self._timer: asyncio.TimerHandle | None = None
        self.batches = 0
        """Merged deltas emitted so far (tests read it)."""
        self._watchers: dict[str, Watcher] = {}

    def watch(self, slot: str, watcher: Watcher) -> None:
        """Tell `watcher` each merged answer (`TokenDelta`) text of `slot`, with the pieces it was made of.

        The slot's stream keeps the text it showed as these merged strings (`ShownText`), the very
        objects every store of the run keeps, instead of a copy of its own. One watcher per slot name:
        a later one (the slot run again) replaces it.
        """
        self._watchers[slot] = watcher

    def add(self, kind: DeltaKind, slot: str, text: str, round_no: int) -> None:
        """One piece of streamed text (one per token: kept O(1) and small)."""
        parts = self._parts
        if parts:
            if kind is self._kind and round_no == self._round and slot == self._slot:
                parts.append(text)
                return
            self.flush()
        self._kind, self._slot, self._round = kind, slot, round_no
        self._parts.append(text)
        if self._timer is None:
            loop = self._timers()
            if loop is None:  # no loop, no timer: nothing may wait
                self.flush()
                return
            wait = self._last + INTERVAL - loop.time()
            if wait <= 0:  # the leading edge: nothing was emitted for an interval, so nothing waits
                self.flush()
            else:  # a burst: gather until an interval after the last delta
                self._timer = loop.call_later(wait, self._timed)

    def _timers(self) -> Timers | None:
        if self._loop is None:
            try:
                self._loop = asyncio.get_running_loop()
            except RuntimeError:
                return None
        return self._loop

    @property
    def pending(self) -> bool:
        return bool(self._parts)

    def flush(self) -> None:
        """Emit the text gathered so far as one delta (nothing when none waits)."""
        timer = self._timer
        if timer is not None:
            timer.cancel()
            self._timer = None
        parts = self._parts
        if not parts:
            return
        text = parts[0] if len(parts) == 1 else "".join(parts)
        self._parts = []
        self.batches += 1
        if self._loop is not None:
            self._last = self._loop.time()
        watcher = self._watchers.get(self._slot) if self._kind is TokenDelta else None
        if watcher is not None:
            watcher(text, self._round, parts)
        self._emit(self._kind(run_id=self._run_id, slot=self._slot, text=text, round=self._round))

    def _timed(self) -> None:
        self._timer = None
        self.flush()

    def release(self) -> None:
        """The run has ended: forget the watchers and the emitter (they close reference cycles), drop what waits."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._parts = []
        self._watchers = {}
        self._emit = _ended


def _ended(event: TokenDelta | ThinkingDelta) -> None:
    """The emitter of a released coalescer: nothing is emitted after the run's end."""


class ShownText:
    """Answer text a slot showed, without a copy of its own: the merged deltas, then the pieces not merged yet.

    Every piece is appended as it streams; when the coalescer emits pieces merged (`merged`), they are
    replaced by the merged string, which the run's log, transcript, views and journal keep too. A
    copy here (`Pieces` joins every `CHUNK` pieces) cost one more copy of a long answer for as long as
    it streamed. `str()` joins without keeping the join (it is read when the text is retracted or the
    slot fails).
    """

    __slots__ = ("_merged", "_tail")

    def __init__(self) -> None:
        self._merged: list[str] = []
        self._tail: list[str] = []
        """Pieces the coalescer has not emitted yet (at most one batch, ~20 ms of streaming)."""

    def append(self, text: str) -> None:
        self._tail.append(text)

    def merged(self, text: str, parts: list[str]) -> None:
        """The coalescer emitted `parts` as `text`: when they are the oldest pieces here, keep `text` instead.

        Compared by identity, so `text` replaces exactly the strings it was joined from (pieces of an
        earlier round or of retracted text are not here, and are ignored).
        """
        tail, n = self._tail, len(parts)
        if n > len(tail) or any(a is not b for a, b in zip(tail, parts, strict=False)):
            return
        del tail[:n]
        self._merged.append(text)

    def __str__(self) -> str:
        return "".join(self._merged + self._tail)

    def __bool__(self) -> bool:
        return bool(self._merged or self._tail)
