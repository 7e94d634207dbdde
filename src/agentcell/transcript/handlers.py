"""One function per event kind: how a wire event changes the `TranscriptState` (mirrors `js/src/state/`).

Each handler reads the event defensively (fields may be missing or of the wrong type) and changes
the transcript in place. Keep this file and the JavaScript handlers in step; the golden fixtures
fail when they drift.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from ..usage import RunStatus, is_final
from .base import MISSING, TranscriptState, thinking, token
from .items import (
    ApprovalItem,
    CompactionItem,
    Item,
    MediaItem,
    NarrationItem,
    RequestItem,
    ResumedItem,
    RetryItem,
    ToolItem,
)
from .model import Slot, is_num, js_str, json_text, norm_usage, num, truthy, usage_delta
from .pieces import Pieces

Ev = Mapping[str, Any]
_OUTER_KEYS = frozenset({"kind", "run_id", "slot", "status", "early_termination", "answer", "usage", "t"})


def _s(ev: Ev, key: str, default: str = "") -> str:
    value = ev.get(key)
    return default if value is None else js_str(value)


def _final(status: Any) -> RunStatus:
    return status if is_final(status) else "failed"


def run_started(tr: TranscriptState, ev: Ev) -> None:
    if tr.ended and ev.get("run_id") == tr.run_id:
        # The next segment of the same run (Run.resume()): keep every slot, run again.
        tr.ended, tr.status, tr.end_t, tr.early_termination, tr.answer = False, "running", None, False, None
        tr.extra = {}
    tr.started = True
    tr.run_id = ev.get("run_id")
    tr.model = _s(ev, "model")
    tr.offline = truthy(ev.get("offline"))
    tr.offline_chosen = truthy(ev.get("offline_chosen"))
    limits = ev.get("limits")
    tr.limits = limits if isinstance(limits, dict | list) else None
    tools = ev.get("tools")
    tr.tools = [js_str(t) for t in tools] if isinstance(tools, list) else []
    schemas = ev.get("tool_schemas")
    tr.tool_schemas = schemas if schemas is not None else ev.get("tool_defs")
    if not is_final(tr.status):
        tr.status = "running"
    infos = ev.get("slots")
    for info in infos if isinstance(infos, list) else ():
        if not isinstance(info, dict) or info.get("name") is None:
            continue
        slot = tr.slot(info["name"])
        assert slot is not None
        slot.type = _s(info, "type", slot.type)
        slot.required = truthy(info.get("required"))
        slot.use_tools = truthy(info.get("use_tools"))


def slot_started(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is None:
        return
    if ev.get("slot_type") is not None:
        slot.type = js_str(ev["slot_type"])
    if is_num(ev.get("index")):
        slot.index = ev["index"]
    if isinstance(ev.get("limits"), dict):
        slot.limits = ev["limits"]
    tr.start_slot(slot)


def token_delta(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is not None:
        token(tr, slot, ev.get("text"), ev.get("round"))


def thinking_delta(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is not None:
        thinking(tr, slot, ev.get("text"), ev.get("round"))


def slot_retracted(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is None:
        return
    found = tr.round_of(slot, tr.ev_round(slot, ev.get("round")))
    r = found.round
    streamed = str(slot.streamed[r]) if r in slot.streamed else ""
    text = ev["text"] if isinstance(ev.get("text"), str) and ev["text"] != "" else streamed
    reason = _s(ev, "reason")
    if reason == "stopped":  # the partial answer is kept, marked stopped
        if r not in slot.streamed and text:
            slot.streamed[r] = Pieces(text)
        slot.answer_stopped = True
        return
    slot.streamed.pop(r, None)
    if text:  # narration belongs before the tool calls of its round
        item: NarrationItem = {"type": "narration", "text": text, "reason": reason, "round": r}
        at = next((i for i, it in enumerate(found.items) if it["type"] not in ("thinking", "narration")), None)
        found.items.insert(len(found.items) if at is None else at, item)


def tool_started(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is not None:
        tr.start_slot(slot)
    if tr.find_tool(ev.get("slot"), _call_id(ev)) is not None:
        return
    args = ev.get("args")
    tr.add_item(ev.get("slot"), _tool_item(ev, {} if args is None else args, num(ev.get("t"), None)),
                tr.ev_round(slot, ev.get("round")))


def tool_completed(tr: TranscriptState, ev: Ev) -> None:
    item = tr.find_tool(ev.get("slot"), _call_id(ev))
    if item is None:  # seen only by its completion
        slot = tr.slot(ev.get("slot"))
        item = _tool_item(ev, None, None)
        tr.add_item(ev.get("slot"), item, tr.ev_round(slot, ev.get("round")))
    result = ev.get("result")
    item["status"] = "ok" if ev.get("ok") is not False else "error"
    item["result"] = "" if result is None else result
    item["error"] = ev.get("error")
    item["cached"] = truthy(ev.get("was_cached"))
    item["elapsed_ms"] = ev["elapsed_ms"] if is_num(ev.get("elapsed_ms")) else None


def _tool_item(ev: Ev, args: Any, start_t: float | None) -> ToolItem:
    return {"type": "tool", "call_id": ev.get("call_id"), "name": _s(ev, "tool_name", "?"), "server": _server(ev),
            "args": args,
            "status": "running", "result": None, "error": None, "cached": False, "elapsed_ms": None,
            "start_t": start_t}


def approval_requested(tr: TranscriptState, ev: Ev) -> None:
    if tr.find_approval(ev.get("slot"), _call_id(ev)) is not None:
        return
    slot = tr.slot(ev.get("slot"))
    args = ev.get("args")
    item: ApprovalItem = {"type": "approval", "call_id": ev.get("call_id"), "name": _s(ev, "tool_name", "?"),
                          "server": _server(ev), "args": {} if args is None else args, "resolved": None}
    tr.add_item(ev.get("slot"), item, tr.ev_round(slot, ev.get("round")))


def _server(ev: Ev) -> str | None:
    """An MCP server's tool names its server (the key is absent for any other tool)."""
    server = ev.get("server")
    return server if isinstance(server, str) else None


def tools_listed(tr: TranscriptState, ev: Ev) -> None:
    """A slot's toolsets described their tools: added to `tool_schemas` (a new list; one entry per name)."""
    listed = [s for s in ev.get("tool_schemas") or [] if isinstance(s, dict)]
    if not listed:
        return
    names = {str(s.get("name", "?")) for s in listed}
    kept = [s for s in tr.tool_schemas if not (isinstance(s, dict) and s.get("name") in names)] \
        if isinstance(tr.tool_schemas, list) else []
    tr.tool_schemas = [*kept, *listed]


def approval_resolved(tr: TranscriptState, ev: Ev) -> None:
    item = tr.find_approval(ev.get("slot"), _call_id(ev))
    if item is not None:
        item["resolved"] = {"approved": truthy(ev.get("approved")), "reason": ev.get("reason")}


def retrying(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    item: RetryItem = {"type": "retry", "attempt": num(ev.get("attempt")), "delay": num(ev.get("delay_s")),
                       "reason": _s(ev, "reason")}
    tr.add_item(ev.get("slot"), item, tr.ev_round(slot, ev.get("round")))


def usage_updated(tr: TranscriptState, ev: Ev) -> None:
    after = norm_usage(ev.get("usage"))
    name = ev.get("slot")
    slot = tr.slot(name if name is not None else tr.current_slot)
    if slot is not None:
        slot.usage = slot.usage + usage_delta(tr.usage, after)
    tr.usage = after


def run_warning(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    tr.add_item(ev.get("slot"), {"type": "warning", "message": _s(ev, "message")}, _current(slot))


def guard_tripped(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is not None:
        slot.status = "halted"
    tr.add_item(ev.get("slot"), {"type": "guard", "reason": _s(ev, "reason")}, _current(slot))


def checkpoint_reached(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    tr.add_item(ev.get("slot"), {"type": "checkpoint", "name": ev.get("name")}, _current(slot))


def slot_completed(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is None:
        return
    slot.status, slot.value, slot.has_value = "completed", ev.get("value"), True
    # wire.py omits `text` when it equals a string `value` (a text answer is not sent twice).
    text, value = ev.get("text"), ev.get("value")
    slot.final_text = text if isinstance(text, str) else value if isinstance(value, str) else None


def slot_failed(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is None:
        return
    slot.status = _final(ev.get("status"))
    slot.error = ev.get("error")
    partial = ev.get("partial")
    if isinstance(partial, str) and partial != "" and slot.answer() == "":
        slot.streamed[slot.current_round] = Pieces(partial)
    if slot.answer() != "":
        slot.answer_stopped = True


def run_resumed(tr: TranscriptState, ev: Ev) -> None:
    tr.segment = max(2, math.floor(num(ev.get("segment"), tr.segment + 1)))
    kept_in = ev.get("kept")
    kept = [js_str(k) for k in kept_in if k is not None] if isinstance(kept_in, list) else []
    restarting = None if ev.get("restarting") is None else js_str(ev["restarting"])
    if tr.ended:  # run_resumed without its run_started (a stream that lost it): the run goes on
        tr.ended, tr.status, tr.end_t = False, "running", None
    marker: ResumedItem = {"type": "resumed", "segment": tr.segment, "kept": kept, "restarting": restarting,
                           "forked_from": None, "fork_round": None, "edited": []}
    tr.add_item(None, _forked(marker, ev))
    for name in kept:
        slot = tr.slot(name)
        assert slot is not None
        slot.kept, slot.status = True, "completed"  # its value came with an earlier segment
    for slot in tr.slots.values():
        if slot.kept or slot.status == "completed" or slot.name == restarting:
            continue
        if slot.status != "pending":
            slot.status = "pending"  # it runs again in this segment
            slot.clear_answer()
    if restarting is not None:
        slot = tr.slot(restarting)
        assert slot is not None
        # Its finished rounds are kept; its partial answer is not (the engine writes it anew), and the
        # new segment numbers its rounds from 1 again: they are shown after the kept ones.
        base = max(slot.rounds) if slot.rounds else 0
        in_slot: ResumedItem = {"type": "resumed", "segment": tr.segment, "kept": [], "restarting": None,
                                "forked_from": None, "fork_round": None, "edited": []}
        tr.add_item(restarting, _forked(in_slot, ev), max(1, base))
        slot.round_base, slot.kept = base, False
        slot.clear_answer()
        slot.status = "running"
        tr.current_slot = slot.name


def _forked(item: ResumedItem, ev: Ev) -> ResumedItem:
    """A fork's marker fields on `item` (none for a resumed run): the original, the round kept up to, the edits."""
    if ev.get("forked_from") is not None:
        edited = ev.get("edited")
        item["forked_from"] = js_str(ev["forked_from"])
        item["fork_round"] = int(num(ev.get("fork_round")))
        item["edited"] = [js_str(e) for e in edited] if isinstance(edited, list) else []
    return item


def context_updated(tr: TranscriptState, ev: Ev) -> None:
    used, window = num(ev.get("used_tokens")), num(ev.get("window"))
    fraction = ev["fraction"] if is_num(ev.get("fraction")) else used / window if window > 0 else 0
    tr.context = {"used": used, "window": window, "fraction": fraction, "request": num(ev.get("request"), None),
                  "slot": ev.get("slot"), "estimated": False}


def compaction_started(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    if slot is not None:
        tr.start_slot(slot)
    tr.add_item(ev.get("slot"), _compaction_item(num(ev.get("tokens")), num(ev.get("window")), num(ev.get("messages"))),
                tr.next_round(slot) if slot is not None else None)


def _compaction_item(tokens: float, window: float, messages: float) -> CompactionItem:
    return {"type": "compaction", "status": "running", "tokens": tokens, "window": window, "messages": messages,
            "before": None, "after": None, "messages_before": None, "messages_after": None, "summarized": None,
            "summary": ""}


def _is_compaction(it: Item) -> TypeGuard[CompactionItem]:
    return it["type"] == "compaction"


def _is_running_compaction(it: Item) -> TypeGuard[CompactionItem]:
    return it["type"] == "compaction" and it["status"] == "running"


def compaction_finished(tr: TranscriptState, ev: Ev) -> None:
    item, slot = tr.find_last(ev.get("slot"), _is_running_compaction)
    if item is None:  # seen only by its end
        slot = tr.slot(ev.get("slot"))
        item = _compaction_item(num(ev.get("before")), 0, num(ev.get("messages_before")))
        tr.add_item(ev.get("slot"), item, tr.next_round(slot) if slot is not None else None)
    summary = ev.get("summary")
    item["status"] = "done"
    item["before"], item["after"] = num(ev.get("before")), num(ev.get("after"))
    item["messages_before"], item["messages_after"] = num(ev.get("messages_before")), num(ev.get("messages_after"))
    item["summarized"] = num(ev.get("summarized"))
    item["summary"] = summary if isinstance(summary, str) else json_text(summary)
    ctx = tr.context
    if ctx is not None and ctx["slot"] == ev.get("slot") and ctx["window"] > 0:
        # Until the next request reports, the gauge shows the estimate after compaction.
        used = num(ev.get("after"))
        tr.context = {**ctx, "used": used, "fraction": used / ctx["window"], "estimated": True}


def request_completed(tr: TranscriptState, ev: Ev) -> None:
    slot = tr.slot(ev.get("slot"))
    purpose = _s(ev, "purpose", "answer")
    u = norm_usage(ev.get("usage"))
    item: RequestItem = {"type": "request", "request": num(ev.get("request")), "purpose": purpose,
                         "latency_ms": num(ev.get("latency_ms"), None), "model": _s(ev, "model"),
                         "ended": _s(ev, "ended", "completed"), "input": u.input_tokens, "output": u.output_tokens,
                         "cost": u.cost}
    if purpose == "compaction":
        # Its numbers count compactions, not rounds: it goes with the compaction marker it wrote.
        marker, _ = tr.find_last(ev.get("slot"), _is_compaction)
        round_no = marker.get("round") if marker is not None else None
        if round_no is None and slot is not None:
            round_no = tr.next_round(slot)
    else:
        round_no = tr.ev_round(slot, ev.get("request"))
    tr.add_item(ev.get("slot"), item, round_no)


def media_added(tr: TranscriptState, ev: Ev) -> None:
    ref = ev.get("media")
    ref = ref if isinstance(ref, dict) else {}
    digest = _s(ref, "digest")
    thumb = ev.get("thumb")
    if isinstance(thumb, str) and thumb.startswith("data:image/"):
        tr.thumbs[digest] = thumb  # sent with the image's first event only: later ones find it here
    call_id = ev.get("call_id")
    item: MediaItem = {"type": "media", "call_id": call_id, "digest": digest, "media_kind": _s(ref, "media_kind"),
                       "media_type": _s(ref, "media_type"), "width": ref.get("width"), "height": ref.get("height"),
                       "name": _s(ref, "name"), "label": _s(ev, "label"), "thumb": tr.thumbs.get(digest, "")}
    slot = tr.slot(ev.get("slot"))
    tr.add_item(ev.get("slot"), item, tr.ev_round(slot, ev.get("round")))


def processing_complete(tr: TranscriptState, ev: Ev) -> None:
    tr.ended = True
    tr.status = _final(ev.get("status"))
    tr.early_termination = truthy(ev.get("early_termination"))
    tr.answer = ev.get("answer")
    if truthy(ev.get("usage")):
        tr.usage = norm_usage(ev["usage"])
    tr.end_t = ev["t"] if is_num(ev.get("t")) else tr.last_t
    tr.extra.update({k: v for k, v in ev.items() if k not in _OUTER_KEYS})
    for slot in tr.slots.values():
        if slot.status == "running":
            slot.status = "completed" if tr.status == "completed" else tr.status


def _current(slot: Slot | None) -> int | None:
    return slot.current_round if slot is not None else None


def _call_id(ev: Ev) -> Any:
    return ev.get("call_id", MISSING)


HANDLERS: dict[str, Callable[[TranscriptState, Ev], None]] = {
    fn.__name__: fn
    for fn in (run_started, slot_started, token_delta, thinking_delta, slot_retracted, tool_started,
               tool_completed, approval_requested, approval_resolved, tools_listed, retrying, usage_updated,
               run_warning, guard_tripped, checkpoint_reached, slot_completed, slot_failed, run_resumed,
               context_updated, compaction_started, compaction_finished, request_completed, media_added,
               processing_complete)
}
"""Event kind → handler; every kind in `events.py` is here or a teaching payload (a test checks)."""
