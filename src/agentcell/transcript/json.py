"""The canonical transcript JSON (tests/fixtures/transcripts/README.md): the same as `transcriptJSON` in JS."""

from __future__ import annotations

from typing import Any

from .base import TranscriptState
from .items import Item
from .model import Slot, usage_json
from .pieces import Pieces


def item_json(item: Item) -> dict[str, Any]:
    """An item without its internal `round` key, text pieces joined."""
    return {k: str(v) if isinstance(v, Pieces) else v for k, v in item.items() if k != "round"}


def slot_json(slot: Slot) -> dict[str, Any]:
    return {
        "name": slot.name,
        "type": slot.type,
        "required": slot.required,
        "use_tools": slot.use_tools,
        "index": slot.index,
        "limits": slot.limits,
        "status": slot.status,
        "kept": slot.kept,
        "round_base": slot.round_base,
        "answer": slot.answer(),
        "answer_stopped": slot.answer_stopped,
        "has_value": slot.has_value,
        "value": slot.value,
        "final_text": slot.final_text,
        "error": slot.error,
        "usage": usage_json(slot.usage),
        "rounds": [
            {"round": r, "items": [item_json(it) for it in slot.rounds[r].items]} for r in sorted(slot.rounds)
        ],
    }


def transcript_json(tr: TranscriptState) -> dict[str, Any]:
    return {
        "run_id": tr.run_id,
        "status": tr.status,
        "ended": tr.ended,
        "model": tr.model,
        "offline": tr.offline,
        "limits": tr.limits,
        "tools": list(tr.tools),
        "segment": tr.segment,
        "early_termination": tr.early_termination,
        "answer": tr.answer,
        "usage": usage_json(tr.usage),
        "first_t": tr.first_t,
        "last_t": tr.last_t,
        "end_t": tr.end_t,
        "context": None if tr.context is None else dict(tr.context),
        "current_slot": tr.current_slot,
        "items": [item_json(it) for it in tr.items],
        "slots": [slot_json(s) for s in tr.slots.values()],
        "unknown_count": tr.unknown_count,
        "extra": dict(tr.extra),
    }
