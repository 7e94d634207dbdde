"""`Transcript`: the one reducer of a run's events into slots → rounds → items (a port of `js/src/state.js`).

Everything that shows or summarizes a run reads it: the engine's `Run.transcript` (live),
`RunHandle` (answers mid-run, retractions applied), the saved notebook's static view, the journal's
restored result and `%agent show`. It consumes **wire events** (the JSON the browser gets, see
`wire.py`), so the Python and JavaScript reducers can be pinned to the same golden files;
`apply_event` takes a typed event and converts it, with a fast path for text deltas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ..events import Event, ThinkingDelta, TokenDelta
from ..events.json import Converted, to_wire
from .base import MISSING, TranscriptState, thinking, token
from .handlers import HANDLERS
from .items import PAYLOAD_KINDS, PayloadItem, PayloadKind
from .json import transcript_json
from .model import MAX_UNKNOWN


class Transcript(TranscriptState):
    """The state of one run as every view shows it; `apply()` one wire event at a time."""

    @classmethod
    def from_wire(cls, events: Iterable[Mapping[str, Any]]) -> Transcript:
        """A transcript of these wire events."""
        transcript = cls()
        for event in events:
            transcript.apply(event)
        return transcript

    # ---- applying events ---------------------------------------------------------------------
    def apply_event(self, event: Event, *, t: float, converted: Converted | None = None) -> None:
        """Apply a typed event seen at `t` seconds (text deltas skip the wire conversion; `converted`: the
        event's conversion if the caller kept it, `wire.wire_fields`)."""
        if isinstance(event, TokenDelta | ThinkingDelta) and self.same_run(event.run_id):
            self.clock(t)
            slot = self.slot(event.slot)
            if slot is not None:
                (token if isinstance(event, TokenDelta) else thinking)(self, slot, event.text, event.round)
            return
        self.apply(to_wire(event, t=t, converted=converted))

    def apply(self, ev: Mapping[str, Any]) -> None:
        """Apply one wire event. Odd input is ignored or kept as unknown, never raised on."""
        if not isinstance(ev, Mapping) or not isinstance(ev.get("kind"), str):
            return
        kind = ev["kind"]
        run_id = ev.get("run_id", MISSING)
        if kind == "run_started":
            if self.started and self.run_id is not None and run_id != self.run_id:
                TranscriptState.__init__(self)  # a new run in the same view: start over
        elif not self.same_run(run_id):
            return
        self.clock(ev.get("t"))
        handler = HANDLERS.get(kind)
        try:
            if handler is not None:
                handler(self, ev)
            elif kind in PAYLOAD_KINDS:
                slot = self.slot(ev.get("slot"))
                item: PayloadItem = {"type": "payload", "kind": cast(PayloadKind, kind), "data": dict(ev)}
                self.add_item(ev.get("slot"), item, self.ev_round(slot, ev.get("round")))
            else:
                self.unknown_count += 1
                if len(self.unknown) < MAX_UNKNOWN:
                    self.unknown.append(dict(ev))
        except (TypeError, ValueError, AttributeError, KeyError):
            pass  # a malformed event must not take the transcript down (as in the browser)

    # ---- reading ----------------------------------------------------------------------------
    @property
    def results(self) -> dict[str, Any]:
        """Slot name → value, for every slot that has one (retractions applied)."""
        return {name: s.value for name, s in self.slots.items() if s.has_value}

    @property
    def partial(self) -> dict[str, str]:
        """Slot name → the answer text shown so far, for slots without a value yet (or stopped)."""
        return {name: s.answer() for name, s in self.slots.items() if not s.has_value and s.answer()}

    @property
    def elapsed(self) -> float:
        """Seconds from the first event to the end (or the latest event while running)."""
        end = self.end_t if self.end_t is not None else self.last_t
        return max(0.0, float(end) - float(self.first_t or 0))

    def to_json(self) -> dict[str, Any]:
        """The canonical transcript (tests/fixtures/transcripts/README.md), identical to the widget's."""
        return transcript_json(self)
