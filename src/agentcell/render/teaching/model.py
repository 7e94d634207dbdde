"""The run as a lesson, from the one `Transcript` (mirror of `js/src/teach/lesson.js` and `messages.js`).

Per slot, per round: the request the model was sent (rebuilt from the `model_request` payloads: the
earlier messages and the new ones), the response, the tool runs (with their times, to show which ran
together, and the error text as the model read it in the next request) and agentcell's interventions
as markers, in the words of `teaching.json`. Keep the derivation rules in step with the JS (the tests
run the same real-run fixtures through both).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ...transcript import Slot, Transcript, is_text_type

Item = dict[str, Any]


@functools.cache
def words() -> dict[str, Any]:
    """The parsed `teaching.json` (shared with the widget)."""
    data: dict[str, Any] = json.loads(resources.files("agentcell").joinpath("teaching.json").read_text())
    return data


def marker(kind: str, **fields: Any) -> Item:
    w = words()["markers"].get(kind, {"title": kind.replace("_", " "), "say": "", "why": ""})
    return {"kind": kind, "title": w["title"], "say": w["say"], "why": w["why"], "text": "", **fields}


def final_reason(reason: str, n: Any = None) -> str:
    table = words()["final_round_reason"]
    return str(table.get(reason, table["other"])).replace("{n}", str(n if n is not None else "?"))


@dataclass
class Request:
    """One model request: every message it sent, how many of them earlier requests already sent."""

    data: Item
    messages: list[Item]
    earlier: int

    @property
    def fresh(self) -> list[Item]:
        return self.messages[self.earlier:]


@dataclass
class LessonRound:
    round: int
    request: Request | None
    offered: list[str] | None
    response: Item | None
    markers: list[Item] = field(default_factory=list)
    tool_runs: list[Item] = field(default_factory=list)
    http: list[Item] = field(default_factory=list)
    usage: Item | None = None
    latency_ms: float | None = None
    model: Item = field(default_factory=dict)


@dataclass
class LessonSlot:
    name: str
    type: str
    status: str
    rounds: list[LessonRound]
    markers: list[Item]


def _payloads(items: list[Item], kind: str) -> list[Item]:
    return [dict(it.get("data") or {}) for it in items if it["type"] == "payload" and it.get("kind") == kind]


def rebuild(payloads: list[Item]) -> list[Request]:
    """Each `model_request` with the whole message list it sent (see `js/src/teach/messages.js`)."""
    messages: list[Item] = []
    out = []
    for d in payloads:
        raw = d.get("offset")
        offset = min(raw, len(messages)) if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 0
        fresh: list[Item] = d["messages"] if isinstance(d.get("messages"), list) else []
        messages = [*messages[:offset], *fresh]
        out.append(Request(data=d, messages=messages, earlier=offset))
    return out


def _tool_messages(request: Request | None) -> dict[str, str]:
    if request is None:
        return {}
    return {str(m["tool_call_id"]): str(m.get("content") or "") for m in request.fresh
            if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") is not None}


def _nudge(request: Request | None) -> str | None:
    prefix = words()["nudge_prefix"]
    for m in request.fresh if request else []:
        content = m.get("content") if isinstance(m, dict) else None
        if m.get("role") == "tool" and isinstance(content, str) and prefix in content:
            return content[content.index(prefix):]
    return None


def _approval(it: Item, fed: dict[str, str]) -> Item:
    resolved = it.get("resolved")
    if not resolved:
        return marker("approval_waiting", text=f"{it['name']}({json.dumps(it.get('args') or {})})", tool=it["name"])
    if resolved.get("approved"):
        return marker("approval_approved", text=it["name"], tool=it["name"])
    read = fed.get(str(it.get("call_id")), resolved.get("reason") or "")
    return marker("approval_denied", text=read, tool=it["name"])


def _item_markers(items: list[Item], following: Request | None) -> list[Item]:
    out: list[Item] = []
    fed = _tool_messages(following)
    for it in items:
        kind = it["type"]
        if kind == "narration":
            out.append(marker("retraction", text=str(it["text"]), reason=it.get("reason")))
        elif kind == "retry":
            why = f" after {it['reason']}" if it.get("reason") else ""
            text = f"retrying in {float(it.get('delay') or 0):.1f} s{why} (attempt {it.get('attempt')})"
            out.append(marker("retry", text=text, reason=it.get("reason")))
        elif kind == "guard":
            out.append(marker("guard_tripped", text=str(it.get("reason") or "")))
        elif kind == "warning":
            out.append(marker("warning", text=str(it.get("message") or "")))
        elif kind == "compaction" and it.get("status") == "done":
            out.append(marker("compaction", text=str(it.get("summary") or "")))
        elif kind == "approval":
            out.append(_approval(it, fed))
    return out


def _runs(items: list[Item], fed: dict[str, str]) -> list[Item]:
    runs = []
    for it in items:
        if it["type"] != "tool":
            continue
        start, ms = it.get("start_t"), it.get("elapsed_ms")
        end = start + ms / 1000 if isinstance(start, int | float) and isinstance(ms, int | float) else None
        runs.append({**it, "end_t": end, "fed_back": fed.get(str(it.get("call_id"))), "with": []})
    for a in runs:
        a["with"] = [b["name"] for b in runs if b is not a and _overlap(a, b)]
    return runs


def _overlap(a: Item, b: Item) -> bool:
    if None in (a["start_t"], b["start_t"], a["end_t"], b["end_t"]):
        return False
    return bool(a["start_t"] < b["end_t"] and b["start_t"] < a["end_t"])


def _model_side(slot: Slot, items: list[Item], r: int, last: bool, response: Item | None) -> Item:
    answer = str(slot.streamed[r]) if r in slot.streamed else ""
    if last and slot.has_value:
        answer = slot.answer() if is_text_type(slot.type) else json.dumps(slot.value, ensure_ascii=False)
    calls = [{"name": it["name"], "args": it.get("args"), "call_id": it.get("call_id")}
             for it in items if it["type"] in ("tool", "approval")]
    seen = {str(c["call_id"]) for c in calls}
    for p in (response or {}).get("parts") or []:
        if isinstance(p, dict) and p.get("part_kind") == "tool-call" and str(p.get("tool_call_id")) not in seen:
            calls.append({"name": str(p.get("tool_name") or "?"), "args": p.get("args"),
                          "call_id": p.get("tool_call_id"), "output": True})
    return {"thinking": [str(it["text"]) for it in items if it["type"] == "thinking"],
            "narration": [{"text": str(it["text"]), "reason": it.get("reason")} for it in items
                          if it["type"] == "narration"],
            "answer": answer, "calls": calls}


def _withheld(slot: Slot, r: int, nudge: str | None, prev: str | None, calls: int) -> str:
    lim = slot.limits or {}
    if isinstance(lim.get("requests"), int | float) and r >= lim["requests"]:
        return final_reason("max_iter", lim["requests"])
    if nudge and prev:
        return final_reason("loop")
    if isinstance(lim.get("tool_calls"), int | float) and calls >= lim["tool_calls"]:
        return final_reason("max_calls", lim["tool_calls"])
    return final_reason("other")


def _slot_markers(slot: Slot) -> list[Item]:
    out = []
    if slot.type == "halt" and slot.status == "completed":
        out.append(marker("guard_joined", text=json.dumps(slot.value, ensure_ascii=False) if slot.has_value else ""))
    if slot.status == "budget_exhausted":
        out.append(marker("budget", text=slot.error or ""))
    return out


def lesson_slot(tr: Transcript, slot: Slot) -> LessonSlot:
    """One slot as a lesson (see the module docstring)."""
    rounds = [slot.rounds[r] for r in sorted(slot.rounds) if slot.rounds[r].items or r in slot.streamed]
    asked = [(rd.round, _payloads(rd.items, "model_request")[-1]) for rd in rounds
             if _payloads(rd.items, "model_request")]
    requests = dict(zip([r for r, _ in asked], rebuild([d for _, d in asked]), strict=True))
    had_tools = (slot.use_tools and bool(tr.tools)) or any(q.data.get("tools") for q in requests.values())
    prev: str | None = None
    calls = 0
    out = []
    for i, rd in enumerate(rounds):
        req = requests.get(rd.round)
        following = requests.get(rounds[i + 1].round) if i + 1 < len(rounds) else None
        answers = _payloads(rd.items, "model_response")
        response = answers[-1] if answers else None
        markers: list[Item] = []
        nudge = _nudge(req)
        if nudge:
            markers.append(marker("nudge", text=nudge))
        offered = [str(t) for t in req.data.get("tools") or []] if req else None
        if req is not None and not offered and had_tools:
            markers.append(marker("final_round", text="(this request carries no tools)",
                                  reason=_withheld(slot, rd.round, nudge, prev, calls)))
        markers += _item_markers(rd.items, following)
        runs = _runs(rd.items, _tool_messages(following))
        prev, calls = nudge, calls + len(runs)
        row = next((it for it in rd.items if it["type"] == "request" and it.get("purpose") != "compaction"), None)
        usage = (response or {}).get("usage") or (
            {"input_tokens": row["input"], "output_tokens": row["output"]} if row else None)
        out.append(LessonRound(round=rd.round, request=req, offered=offered, response=response, markers=markers,
                               tool_runs=runs, http=_payloads(rd.items, "http_exchange"), usage=usage,
                               latency_ms=row.get("latency_ms") if row else None,
                               model=_model_side(slot, rd.items, rd.round, i == len(rounds) - 1, response)))
    return LessonSlot(name=slot.name, type=slot.type, status=slot.status, rounds=out, markers=_slot_markers(slot))


def offered_tools(tr: Transcript) -> list[Item]:
    """The tools the run offered: `{name, description, schema}` (schema `None` when not sent)."""
    by_name: dict[str, Item] = {t: {"name": t, "description": "", "schema": None} for t in tr.tools}
    for s in tr.tool_schemas if isinstance(tr.tool_schemas, list) else []:
        if isinstance(s, dict):
            name = str(s.get("name", "?"))
            schema = s.get("parameters_json_schema", s.get("parameters", s.get("input_schema")))
            by_name[name] = {"name": name, "description": str(s.get("description") or ""), "schema": schema}
    return list(by_name.values())


def marker_kinds(slots: list[LessonSlot]) -> list[str]:
    """Every marker kind the lesson shows, in first-seen order."""
    kinds = [m["kind"] for s in slots for r in s.rounds for m in r.markers]
    kinds += [m["kind"] for s in slots for m in s.markers]
    return list(dict.fromkeys(kinds))
