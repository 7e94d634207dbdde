"""`Transcript`: the one reducer of a run's events into slots → rounds → items (a port of `js/state.js`).

Everything that shows or summarizes a run reads it: the engine's `Run.transcript` (live),
`RunHandle` (answers mid-run, retractions applied), the saved notebook's static view, the journal's
restored result and `%agent show`. It consumes **wire events** (the JSON the browser gets, see
`wire.py`), so the Python and JavaScript reducers can be pinned to the same golden files;
`apply_event` takes a typed event and converts it, with a fast path for text deltas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..events import Event, ThinkingDelta, TokenDelta
from .model import (
    MAX_UNKNOWN,
    PAYLOAD_KINDS,
    Item,
    Pieces,
    Round,
    Slot,
    empty_usage,
    is_num,
    js_str,
)

_MISSING: Any = object()
"""A field absent from the event (JavaScript's `undefined`)."""


class Transcript:
    """The state of one run as every view shows it; `apply()` one wire event at a time."""

    def __init__(self) -> None:
        self.started = False
        self.ended = False
        self.run_id: str | None = None
        self.model = ""
        self.offline = False
        self.limits: Any = None
        self.tools: list[str] = []
        self.tool_schemas: Any = None
        self.status = "idle"
        self.early_termination = False
        self.answer: Any = None
        self.first_t: float | None = None
        self.last_t: float = 0
        self.end_t: float | None = None
        self.usage: dict[str, Any] = empty_usage()
        self.slots: dict[str, Slot] = {}
        """Name → slot, in the order first seen (the display order)."""
        self.items: list[Item] = []
        """Run-level items (events of no slot): warnings, retries, checkpoints, resume markers."""
        self.current_slot: str | None = None
        self.unknown: list[dict[str, Any]] = []
        self.unknown_count = 0
        self.extra: dict[str, Any] = {}
        self.segment = 1
        self.context: dict[str, Any] | None = None

    @classmethod
    def from_wire(cls, events: Iterable[Mapping[str, Any]]) -> Transcript:
        """A transcript of these wire events."""
        transcript = cls()
        for event in events:
            transcript.apply(event)
        return transcript

    # ---- applying events ---------------------------------------------------------------------
    def apply_event(self, event: Event, *, t: float) -> None:
        """Apply a typed event seen at `t` seconds (text deltas skip the wire conversion)."""
        if isinstance(event, TokenDelta | ThinkingDelta) and self._same_run(event.run_id):
            self._clock(t)
            slot = self.slot(event.slot)
            if slot is not None:
                (_token if isinstance(event, TokenDelta) else _thinking)(self, slot, event.text, event.round)
            return
        from ..wire import to_wire

        self.apply(to_wire(event, t=t))

    def apply(self, ev: Mapping[str, Any]) -> None:
        """Apply one wire event. Odd input is ignored or kept as unknown, never raised on."""
        if not isinstance(ev, Mapping) or not isinstance(ev.get("kind"), str):
            return
        kind = ev["kind"]
        run_id = ev.get("run_id", _MISSING)
        if kind == "run_started":
            if self.started and self.run_id is not None and run_id != self.run_id:
                self.__init__()  # type: ignore[misc]  # a new run in the same view: start over
        elif not self._same_run(run_id):
            return
        self._clock(ev.get("t"))
        from .handlers import HANDLERS

        handler = HANDLERS.get(kind)
        try:
            if handler is not None:
                handler(self, ev)
            elif kind in PAYLOAD_KINDS:
                slot = self.slot(ev.get("slot"))
                item = {"type": "payload", "kind": kind, "data": dict(ev)}
                self.add_item(ev.get("slot"), item, self.ev_round(slot, ev.get("round")))
            else:
                self.unknown_count += 1
                if len(self.unknown) < MAX_UNKNOWN:
                    self.unknown.append(dict(ev))
        except (TypeError, ValueError, AttributeError, KeyError):
            pass  # a malformed event must not take the transcript down (as in the browser)

    def _same_run(self, run_id: Any) -> bool:
        return self.run_id is None or run_id in (None, "", _MISSING) or run_id == self.run_id

    def _clock(self, t: Any) -> None:
        if is_num(t):
            if self.first_t is None:
                self.first_t = t
            if t > self.last_t:
                self.last_t = t

    # ---- helpers the handlers share ---------------------------------------------------------
    def slot(self, name: Any) -> Slot | None:
        """The slot named `name`, created on first mention; `None` for run-level events."""
        if name is None or name is _MISSING:
            return None
        key = js_str(name)
        found = self.slots.get(key)
        if found is None:
            found = self.slots[key] = Slot(key)
        return found

    @staticmethod
    def round_of(slot: Slot, n: Any) -> Round:
        r = int(n) if is_num(n) and n > 0 else slot.current_round
        found = slot.rounds.get(r)
        if found is None:
            found = slot.rounds[r] = Round(r)
        if r > slot.current_round:
            slot.current_round = r
        return found

    @staticmethod
    def ev_round(slot: Slot | None, n: Any) -> int | None:
        """The view's round for an event's `round` (or `request`) field, or `None` when it has none."""
        return int(n) + (slot.round_base if slot else 0) if is_num(n) and n > 0 else None

    @staticmethod
    def next_round(slot: Slot) -> int:
        """The round a "before the next request" item belongs to (compaction precedes a request)."""
        r = slot.current_round
        cur = slot.rounds.get(r)
        return r + 1 if (cur is not None and cur.items) or r in slot.streamed else r

    def add_item(self, slot_name: Any, item: Item, round_no: int | None = None) -> Item:
        slot = self.slot(slot_name)
        if slot is None:
            self.items.append(item)
            return item
        found = self.round_of(slot, round_no)
        item["round"] = found.round
        found.items.append(item)
        return item

    def find_last(self, slot_name: Any, pred: Callable[[Item], bool]) -> tuple[Item | None, Slot | None]:
        slot = self.slot(slot_name)
        if slot is None:
            return next((it for it in reversed(self.items) if pred(it)), None), None
        for r in sorted(slot.rounds, reverse=True):
            for it in reversed(slot.rounds[r].items):
                if pred(it):
                    return it, slot
        return None, slot

    def find_tool(self, slot_name: Any, call_id: Any) -> Item | None:
        slot = self.slot(slot_name)
        for found in reversed(list(slot.rounds.values()) if slot else []):
            for it in reversed(found.items):
                if it["type"] == "tool" and call_id is not _MISSING and it["call_id"] == call_id:
                    return it
        return None

    def find_approval(self, slot_name: Any, call_id: Any) -> Item | None:
        named = self.slot(slot_name)
        for slot in [named] if named is not None else list(self.slots.values()):
            for found in slot.rounds.values():
                for it in found.items:
                    if it["type"] == "approval" and call_id is not _MISSING and it["call_id"] == call_id:
                        return it
        return None

    def start_slot(self, slot: Slot) -> None:
        if slot.status == "pending":
            slot.status = "running"
        self.current_slot = slot.name

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
        from .json import transcript_json

        return transcript_json(self)


def _token(tr: Transcript, slot: Slot, text: Any, round_no: Any) -> None:
    if not isinstance(text, str):
        return
    tr.start_slot(slot)
    r = tr.round_of(slot, tr.ev_round(slot, round_no)).round
    pieces = slot.streamed.get(r)
    if pieces is None:
        slot.streamed[r] = Pieces(text)
    else:
        pieces.append(text)
    slot.saw_tokens = True


def _thinking(tr: Transcript, slot: Slot, text: Any, round_no: Any) -> None:
    if not isinstance(text, str):
        return
    tr.start_slot(slot)
    found = tr.round_of(slot, tr.ev_round(slot, round_no))
    last = found.items[-1] if found.items else None
    if last is not None and last["type"] == "thinking":
        last["text"].append(text)
    else:
        tr.add_item(slot.name, {"type": "thinking", "text": Pieces(text)}, found.round)


