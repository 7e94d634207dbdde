"""Streamed text merged before it fans out: one text delta per `INTERVAL` of streaming, not one per token.

Every event a run emits goes to the run's log, its transcript, each view (the widget, a printer) and
the journal; none of them needs the model's tokens one by one (the widget sends ≤ 20 batches a second,
the journal writes every 0.2 s). A fast stream (a scripted or local model: thousands of tokens a second)
made each of them pay per token: a `TokenDelta`, a reducer step, a wire dict, a journal row (a
1,000,000-token answer wrote 120 MB of rows and hit the journal's 64 MB cap half way). So the run's sink
gathers consecutive text of one slot, round and kind here and emits it as **one** delta when:

* `INTERVAL` (20 ms) passed since the first piece of the batch (a timer on the run's loop), or
* any other event is emitted (`flush` first, so the order of events never changes: a retraction, a
  tool call, a Stop, the slot's end all follow the text shown before them), or
* text of another slot, round or kind arrives.

A model streaming slower than one token per 20 ms (every hosted model) gets a delta per token as
before; readers see the text at most 20 ms later. Without a running loop (no timer) nothing is held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..events import ThinkingDelta, TokenDelta

INTERVAL = 0.02
"""Seconds the first piece of a batch may wait before the batch is emitted."""

DeltaKind = type[TokenDelta] | type[ThinkingDelta]


class TextCoalescer:
    """Pending text deltas of one run, emitted merged through `emit` (see the module docstring)."""

    __slots__ = ("_emit", "_kind", "_parts", "_round", "_run_id", "_slot", "_timer", "batches")

    def __init__(self, run_id: str, emit: Callable[[TokenDelta | ThinkingDelta], None]) -> None:
        self._run_id = run_id
        self._emit = emit
        self._parts: list[str] = []
        self._kind: DeltaKind = TokenDelta
        self._slot = ""
        self._round = 0
        self._timer: asyncio.TimerHandle | None = None
        self.batches = 0
        """Merged deltas emitted so far (tests read it)."""

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
            try:
                self._timer = asyncio.get_running_loop().call_later(INTERVAL, self._timed)
            except RuntimeError:  # no loop, no timer: nothing may wait
                self.flush()

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
        self._emit(self._kind(run_id=self._run_id, slot=self._slot, text=text, round=self._round))

    def _timed(self) -> None:
        self._timer = None
        self.flush()
