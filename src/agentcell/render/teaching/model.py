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

from ...transcript import ApprovalItem, Item, Slot, Transcript, is_text_type
from ...usage import SlotStatus

Json = dict[str, Any]
"""A lesson's own pieces (markers, tool runs, payload data): JSON objects, as the widget's lesson builds them."""


@functools.cache
def words() -> dict[str, Any]:
    """The parsed `teaching.json` (shared with the widget)."""
    data: dict[str, Any] = json.loads(resources.files("agentcell").joinpath("teaching.json").read_text())
    return data


def marker(kind: str, **fields: Any) -> Json:
    w = words()["markers"].get(kind, {"title": kind.replace("_", " "), "say": "", "why": ""})
    return {"kind": kind, "title": w["title"], "say": w["say"], "why": w["why"], "text": "", **fields}


def final_reason(reason: str, n: Any = None) -> str:
    table = words()["final_round_reason"]
    return str(table.get(reason, table["other"])).replace("{n}", str(n if n is not None else "?"))


@dataclass
class Request:
    """One model request: every message it sent, how many of them earlier requests already sent."""

    data: Json
    messages: list[Json]
    earlier: int

    @property
    def fresh(self) -> list[Json]:
        return self.messages[self.earlier:]


@dataclass
class LessonRound:
    round: int
    request: Request | None
    offered: list[str] | None
    response: Json | None
    markers: list[Json] = field(default_factory=list)
    tool_runs: list[Json] = field(default_factory=list)
    http: list[Json] = field(default_factory=list)
    usage: Json | None = None
    latency_ms: float | None = None
    model: Json = field(default_factory=dict)


@dataclass
class LessonSlot:
    name: str
    type: str
    status: SlotStatus
    rounds: list[LessonRound]
    markers: list[Json]


def _payloads(items: list[Item], kind: str) -> list[Json]:
    return [dict(it["data"] or {}) for it in items if it["type"] == "payload" and it["kind"] == kind]


def rebuild(payloads: list[Json]) -> list[Request]:
    """Each `model_request` with the whole message list it sent (see `js/src/teach/messages.js`)."""
    messages: list[Json] = []
    out = []
    for d in payloads:
        raw = d.get("offset")
        offset = min(raw, len(messages)) if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 0
        fresh: list[Json] = d["messages"] if isinstance(d.get("messages"), list) else []
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


def _approval(it: ApprovalItem, fed: dict[str, str]) -> Json:
    resolved = it["resolved"]
    if not resolved:
        return marker("approval_waiting", text=f"{it['name']}({json.dumps(it['args'] or {})})", tool=it["name"])
    if resolved["approved"]:
        return marker("approval_approved", text=it["name"], tool=it["name"])
    read = fed.get(str(it["call_id"]), resolved["reason"] or "")
    return marker("approval_denied", text=read, tool=it["name"])


def _item_markers(items: list[Item], following: Request | None) -> list[Json]:
    out: list[Json] = []
    fed = _tool_messages(following)
    for it in items:
        match it["type"]:
            case "narration":
                out.append(marker("retraction", text=it["text"], reason=it["reason"]))
            case "retry":
                why = f" after {it['reason']}" if it["reason"] else ""
                text = f"retrying in {float(it['delay'] or 0):.1f} s{why} (attempt {it['attempt']})"
                out.append(marker("retry", text=text, reason=it["reason"]))
            case "guard":
                out.append(marker("guard_tripped", text=it["reason"]))
            case "warning":
                out.append(marker("warning", text=it["message"]))
            case "compaction" if it["status"] == "done":
                out.append(marker("compaction", text=it["summary"]))
            case "approval":
                out.append(_approval(it, fed))
            case "resumed" if it["forked_from"] is not None:
                edited = f" (edited: {', '.join(it['edited'])})" if it["edited"] else ""
                out.append(marker("fork_point", text=f"forked from {it['forked_from']} at round {it['fork_round']}"
                                                     f"{edited}"))
    return out


def _runs(items: list[Item], fed: dict[str, str]) -> list[Json]:
    runs: list[Json] = []
    for it in items:
        if it["type"] != "tool":
            continue
        start, ms = it["start_t"], it["elapsed_ms"]
        end = start + ms / 1000 if start is not None and ms is not None else None
        runs.append({**it, "end_t": end, "fed_back": fed.get(str(it["call_id"])), "with": []})
    for a in runs:
        a["with"] = [b["name"] for b in runs if b is not a and _overlap(a, b)]
    return runs


def _overlap(a: Json, b: Json) -> bool:
    if None in (a["start_t"], b["start_t"], a["end_t"], b["end_t"]):
        return False
    return bool(a["start_t"] < b["end_t"] and b["start_t"] < a["end_t"])


def _model_side(slot: Slot, items: list[Item], r: int, last: bool, response: Json | None) -> Json:
    answer = str(slot.streamed[r]) if r in slot.streamed else ""
    if last and slot.has_value:
        answer = slot.answer() if is_text_type(slot.type) else json.dumps(slot.value, ensure_ascii=False)
    calls: list[Json] = [{"name": it["name"], "args": it["args"], "call_id": it["call_id"]}
                         for it in items if it["type"] == "tool" or it["type"] == "approval"]
    seen = {str(c["call_id"]) for c in calls}
    for p in (response or {}).get("parts") or []:
        if isinstance(p, dict) and p.get("part_kind") == "tool-call" and str(p.get("tool_call_id")) not in seen:
            calls.append({"name": str(p.get("tool_name") or "?"), "args": p.get("args"),
                          "call_id": p.get("tool_call_id"), "output": True})
    return {"thinking": [str(it["text"]) for it in items if it["type"] == "thinking"],
            "narration": [{"text": it["text"], "reason": it["reason"]} for it in items if it["type"] == "narration"],
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


def _slot_markers(slot: Slot) -> list[Json]:
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
        markers: list[Json] = []
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
        row = next((it for it in rd.items if it["type"] == "request" and it["purpose"] != "compaction"), None)
        usage = (response or {}).get("usage") or (
            {"input_tokens": row["input"], "output_tokens": row["output"]} if row else None)
        out.append(LessonRound(round=rd.round, request=req, offered=offered, response=response, markers=markers,
                               tool_runs=runs, http=_payloads(rd.items, "http_exchange"), usage=usage,
                               latency_ms=row.get("latency_ms") if row else None,
                               model=_model_side(slot, rd.items, rd.round, i == len(rounds) - 1, response)))
    return LessonSlot(name=slot.name, type=slot.type, status=slot.status, rounds=out, markers=_slot_markers(slot))


def offered_tools(tr: Transcript) -> list[Json]:
    """The tools the run offered: `{name, description, schema, server}` (schema `None` when not sent; server
    the MCP server's name for its tools, from `tools_listed`)."""
    by_name: dict[str, Json] = {t: {"name": t, "description": "", "schema": None, "server": None} for t in tr.tools}
    for s in tr.tool_schemas if isinstance(tr.tool_schemas, list) else []:
        if isinstance(s, dict):
            name = str(s.get("name", "?"))
            schema = s.get("parameters_json_schema", s.get("parameters", s.get("input_schema")))
            by_name[name] = {"name": name, "description": str(s.get("description") or ""), "schema": schema,
                             "server": s["server"] if isinstance(s.get("server"), str) else None}
    return list(by_name.values())


def marker_kinds(slots: list[LessonSlot]) -> list[str]:
    """Every marker kind the lesson shows, in first-seen order."""
    kinds = [m["kind"] for s in slots for r in s.rounds for m in r.markers]
    kinds += [m["kind"] for s in slots for m in s.markers]
    return list(dict.fromkeys(kinds))
