"""The transcript's state and the helpers its handlers share (slots, rounds, finding items).

`TranscriptState` holds every field; `state.Transcript` adds applying events and reading results.
Kept apart so the handlers can name the state they change without importing the reducer that
calls them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard, TypeVar

from ..usage import LiveStatus, Usage
from .items import ApprovalItem, ContextGauge, Item, ToolItem
from .model import Round, Slot, is_num, js_str
from .pieces import Pieces

T = TypeVar("T")

MISSING: Any = object()
"""A field absent from the event (JavaScript's `undefined`)."""


class TranscriptState:
    """Every field of a transcript (see `state.Transcript` for applying events)."""

    def __init__(self) -> None:
        self.started = False
        self.ended = False
        self.run_id: str | None = None
        self.model = ""
        self.offline = False
        self.offline_chosen = False
        """`run_started.offline_chosen`: the offline model was picked, not the default (views word it so)."""
        self.limits: Any = None
        self.tools: list[str] = []
        self.tool_schemas: Any = None
        self.status: LiveStatus = "idle"
        self.early_termination = False
        self.answer: Any = None
        self.first_t: float | None = None
        self.last_t: float = 0
        self.end_t: float | None = None
        self.usage = Usage()
        self.slots: dict[str, Slot] = {}
        """Name → slot, in the order first seen (the display order)."""
        self.items: list[Item] = []
        """Run-level items (events of no slot): warnings, retries, checkpoints, resume markers."""
        self.current_slot: str | None = None
        self.unknown: list[dict[str, Any]] = []
        self.unknown_count = 0
        self.extra: dict[str, Any] = {}
        self.segment = 1
        self.context: ContextGauge | None = None
        self.thumbs: dict[str, str] = {}
        """Digest → thumbnail (`media_added` carries it once per image); not part of the JSON."""

    def same_run(self, run_id: Any) -> bool:
        return self.run_id is None or run_id in (None, "", MISSING) or run_id == self.run_id

    def clock(self, t: Any) -> None:
        if is_num(t):
            if self.first_t is None:
                self.first_t = t
            if t > self.last_t:
                self.last_t = t

    # ---- helpers the handlers share ---------------------------------------------------------
    def slot(self, name: Any) -> Slot | None:
        """The slot named `name`, created on first mention; `None` for run-level events."""
        if name is None or name is MISSING:
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

    def add_item(self, slot_name: Any, item: Item, round_no: int | None = None) -> None:
        slot = self.slot(slot_name)
        if slot is None:
            self.items.append(item)
            return
        found = self.round_of(slot, round_no)
        item["round"] = found.round
        found.items.append(item)
        if item["type"] == "tool" and isinstance(item["call_id"], str):
            slot.tools[item["call_id"]] = item

    def find_last(self, slot_name: Any, pred: Callable[[Item], TypeGuard[T]]) -> tuple[T | None, Slot | None]:
        """The newest item of the slot (or at run level) that `pred` picks, with the slot."""
        slot = self.slot(slot_name)
        if slot is None:
            return next((it for it in reversed(self.items) if pred(it)), None), None
        for r in sorted(slot.rounds, reverse=True):
            for it in reversed(slot.rounds[r].items):
                if pred(it):
                    return it, slot
        return None, slot

    def find_tool(self, slot_name: Any, call_id: Any) -> ToolItem | None:
        """The slot's tool item with this call id (the newest, for an odd id that is not a string)."""
        slot = self.slot(slot_name)
        if slot is not None and isinstance(call_id, str):
            return slot.tools.get(call_id)  # a tool event per call: no walk of the slot's rounds
        if slot is None or call_id is MISSING:
            return None
        for found in reversed(slot.rounds.values()):  # an odd id (not a string): rare
            for it in found.items[::-1]:
                if it["type"] == "tool" and it["call_id"] == call_id:
                    return it
        return None

    def find_approval(self, slot_name: Any, call_id: Any) -> ApprovalItem | None:
        named = self.slot(slot_name)
        for slot in [named] if named is not None else list(self.slots.values()):
            for found in slot.rounds.values():
                for it in found.items:
                    if it["type"] == "approval" and call_id is not MISSING and it["call_id"] == call_id:
                        return it
        return None

    def start_slot(self, slot: Slot) -> None:
        if slot.status == "pending":
            slot.status = "running"
        self.current_slot = slot.name


def token(tr: TranscriptState, slot: Slot, text: Any, round_no: Any) -> None:
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


def thinking(tr: TranscriptState, slot: Slot, text: Any, round_no: Any) -> None:
    if not isinstance(text, str):
        return
    tr.start_slot(slot)
    found = tr.round_of(slot, tr.ev_round(slot, round_no))
    last = found.items[-1] if found.items else None
    if last is not None and last["type"] == "thinking":
        last["text"].append(text)
    else:
        tr.add_item(slot.name, {"type": "thinking", "text": Pieces(text)}, found.round)


