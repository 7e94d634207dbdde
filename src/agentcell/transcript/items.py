"""The items of a transcript, one `TypedDict` per `type`: a discriminated union a reader narrows with `match`.

An item is one thing in a slot's round (or at run level): thinking, narration, a tool call, an approval,
a marker. They are `TypedDict`s rather than frozen dataclasses because an item *is* its canonical JSON
(tests/fixtures/transcripts/README.md), the same object shape the widget's reducer builds
(`js/src/state/json.js`), and because the reducer completes items in place as later events arrive (a
tool call gets its result, an approval its answer, a compaction its numbers, thinking its next delta)
while `Slot.tools` indexes them by call id: a frozen item would have to be rebuilt and re-found in its
round at each of those. `item_json` only drops the internal `round` key and joins `Pieces`.

`literals()` is this vocabulary (and the statuses) as JSON for the JavaScript reducer: `literals.json` beside
this file, written by `scripts/write_literals.py` and checked against these types by a test.
"""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from ..usage import LiveStatus, RunStatus, SlotStatus
from .pieces import Pieces

ToolStatus: TypeAlias = Literal["running", "ok", "error"]
CompactionStatus: TypeAlias = Literal["running", "done"]
PayloadKind: TypeAlias = Literal[
    "model_request", "model_response", "http_exchange", "request_sent", "response_received",
    "step_paused", "step_resumed", "fault_injected", "prediction",
]
"""Teaching-view payloads: kept as items of their round, not interpreted."""


class _InRound(TypedDict):
    round: NotRequired[int]
    """The round the item belongs to (slot items only; internal, not in the JSON)."""


class ThinkingItem(_InRound):
    type: Literal["thinking"]
    text: Pieces
    """Grows with each `thinking_delta` of its round."""


class NarrationItem(_InRound):
    """Streamed text taken back from the answer (`slot_retracted`), shown before the round's tool calls."""

    type: Literal["narration"]
    text: str
    reason: str


class ToolItem(_InRound):
    type: Literal["tool"]
    call_id: Any
    """As the event sent it (a string normally; any JSON value is kept as it came)."""
    name: str
    server: str | None
    """The MCP server the tool comes from (`None` for any other tool)."""
    args: Any
    status: ToolStatus
    result: Any
    error: Any
    cached: bool
    elapsed_ms: float | None
    start_t: float | None


class Resolution(TypedDict):
    approved: bool
    reason: Any


class ApprovalItem(_InRound):
    type: Literal["approval"]
    call_id: Any
    name: str
    server: str | None
    """As on the tool item."""
    args: Any
    resolved: Resolution | None
    """`None` until the person answered."""


class RetryItem(_InRound):
    type: Literal["retry"]
    attempt: float
    delay: float
    reason: str


class WarningItem(_InRound):
    type: Literal["warning"]
    message: str


class GuardItem(_InRound):
    type: Literal["guard"]
    reason: str


class CheckpointItem(_InRound):
    type: Literal["checkpoint"]
    name: Any


class ResumedItem(_InRound):
    """A resume marker: at run level with the kept slots; in the restarting slot with `kept` [] and no `restarting`."""

    type: Literal["resumed"]
    segment: int
    kept: list[str]
    restarting: str | None
    forked_from: str | None
    """A fork's marker (`RunResult.fork`): the original run; `None` on a resumed run's markers."""
    fork_round: int | None
    """A fork: the last round of the restarting slot kept from the original."""
    edited: list[str]
    """A fork: what was changed at the fork point."""


class CompactionItem(_InRound):
    type: Literal["compaction"]
    status: CompactionStatus
    tokens: float
    window: float
    messages: float
    before: float | None
    after: float | None
    messages_before: float | None
    messages_after: float | None
    summarized: float | None
    summary: str


class RequestItem(_InRound):
    """One model request's row: latency, tokens and cost (`request_completed`)."""

    type: Literal["request"]
    request: float
    purpose: str
    latency_ms: float | None
    model: str
    ended: str
    input: int
    output: int
    cost: float | None


class MediaItem(_InRound):
    """An image, document or audio the model was sent (`media_added`): with the slot's prompt (`call_id` null)
    or in the result of tool call `call_id`. `thumb` is the thumbnail's `data:` URI (`""`: none)."""

    type: Literal["media"]
    call_id: Any
    digest: str
    media_kind: str
    media_type: str
    width: Any
    height: Any
    name: str
    label: str
    thumb: str


class PayloadItem(_InRound):
    type: Literal["payload"]
    kind: PayloadKind
    data: dict[str, Any]
    """The wire event as it came."""


Item: TypeAlias = (
    ThinkingItem | NarrationItem | ToolItem | ApprovalItem | RetryItem | WarningItem | GuardItem | CheckpointItem
    | ResumedItem | CompactionItem | RequestItem | PayloadItem | MediaItem
)
"""One thing in a round (or at run level); its `type` says which."""
ItemType: TypeAlias = Literal[
    "thinking", "narration", "tool", "approval", "retry", "warning", "guard", "checkpoint", "resumed", "compaction",
    "request", "payload", "media",
]

PAYLOAD_KINDS: frozenset[str] = frozenset(typing.get_args(PayloadKind))


class ContextGauge(TypedDict):
    """The latest `context_updated` (or the estimate after a compaction): how full the model's window is."""

    used: float
    window: float
    fraction: float
    request: float | None
    slot: Any
    estimated: bool


def literal_values(tp: Any) -> list[str]:
    """The strings of a `Literal` type, or of a union of them, in declaration order."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is Literal:
        return [str(a) for a in args]
    return [value for arg in args for value in literal_values(arg)]


def item_keys() -> dict[str, list[str]]:
    """Item type → the keys of its canonical JSON after `type`, in order (the `TypedDict`s without `round`)."""
    out = {}
    for cls in typing.get_args(Item):
        hints = typing.get_type_hints(cls)
        out[literal_values(hints["type"])[0]] = [k for k in hints if k not in ("type", "round")]
    return out


def literals() -> dict[str, Any]:
    """The transcript's vocabulary as the JavaScript reducer reads it (`literals.json`)."""
    return {
        "final_statuses": literal_values(RunStatus),
        "slot_statuses": literal_values(SlotStatus),
        "run_statuses": literal_values(LiveStatus),
        "item_types": literal_values(ItemType),
        "item_keys": item_keys(),
        "tool_statuses": literal_values(ToolStatus),
        "payload_kinds": literal_values(PayloadKind),
    }



LITERALS_JSON = Path(__file__).with_name("literals.json")
"""Where `literals()` is written for the JavaScript reducer (`js/src/state/core.js` imports it)."""


def literals_text() -> str:
    """The text `literals.json` must have."""
    return json.dumps(literals(), indent=2) + "\n"
