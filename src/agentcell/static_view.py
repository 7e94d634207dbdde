"""A finished run as static HTML and plain text, for notebooks read without a kernel.

The widget needs a kernel (or saved widget state) to show anything. Once a run ends, its output is
updated with this rendering next to the widget view, so nbconvert's HTML, GitHub-style renderers
and JupyterLab on an untrusted notebook still show the transcript: slots, thinking, narration,
tool calls with their arguments and results, approvals, warnings and the answer.

Everything here is built from the same wire events the browser gets (`wire.py`), and **every piece
of text is escaped** (`html.escape`): model and tool text can never become markup, links, styles
or scripts. Markdown answers are shown as escaped paragraphs, not rendered.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .wire import WireEvent

MIME_HTML = "text/html"
MIME_PLAIN = "text/plain"
LONG = 600
"""Tool results (and arguments) longer than this many characters are collapsed."""

_STATUS_LABEL = {
    "completed": "done",
    "stopped": "stopped",
    "halted": "halted",
    "budget_exhausted": "budget exhausted",
    "failed": "failed",
    "running": "running",
    "pending": "skipped",
}
_RETRACT_LABEL = {
    "gathering": "narration (the model went on to call tools)",
    "errored": "retracted: the request failed",
    "halted": "retracted: a guard tripped",
}

# Scoped to the rendering; JupyterLab's theme variables with neutral fallbacks. Renderers that strip
# <style> (GitHub, sanitizers) still get readable semantic HTML. The first rule hides the widget
# output just before this one when it holds no rendered view (JupyterLab without a kernel shows
# "Loading widget..." there; nbconvert without the widget CDNs shows nothing).
_CSS = """
.jp-OutputArea-child:has(+ .jp-OutputArea-child .agentcell-static[data-status]:not([data-status="running"])):not(
 :has(.agentcell)){display:none}
.agentcell-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;
 color:var(--jp-ui-font-color1,#1f1f1f);border:1px solid var(--jp-border-color2,#d0d0d0);
 border-radius:6px;padding:8px 12px;max-width:100%;overflow-wrap:anywhere}
.agentcell-static pre{white-space:pre-wrap;margin:4px 0;padding:6px 8px;max-height:24em;overflow:auto;
 background:var(--jp-layout-color2,#f3f3f3);border-radius:4px;font-size:12px}
.agentcell-static .ac-head{margin:0 0 6px 0;color:var(--jp-ui-font-color2,#555)}
.agentcell-static .ac-slot{margin:8px 0 0 0;border-top:1px solid var(--jp-border-color2,#e0e0e0);padding-top:6px}
.agentcell-static .ac-muted,.agentcell-static .ac-thinking{color:var(--jp-ui-font-color2,#666)}
.agentcell-static .ac-narration{color:var(--jp-ui-font-color2,#666);border-left:3px solid
 var(--jp-border-color1,#bbb);margin:4px 0;padding-left:8px}
.agentcell-static .ac-tool{border:1px solid var(--jp-border-color2,#ddd);border-radius:4px;margin:4px 0;padding:4px 8px}
.agentcell-static .ac-error{color:var(--jp-error-color1,#b3261e)}
.agentcell-static .ac-answer{margin-top:6px}
.agentcell-static .ac-answer p{margin:4px 0}
"""


@dataclass
class _Slot:
    name: str
    type: str = "text"
    status: str = "pending"
    rounds: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    streamed: dict[int, str] = field(default_factory=dict)
    final_text: str | None = None
    value: Any = None
    has_value: bool = False
    error: str | None = None
    stopped: bool = False

    def items(self, round_no: int | None) -> list[dict[str, Any]]:
        n = round_no if isinstance(round_no, int) and round_no > 0 else max(self.rounds, default=1)
        return self.rounds.setdefault(n, [])

    def answer(self) -> str:
        if self.final_text is not None and self.type.lower() in ("text", "respond", "str", ""):
            return self.final_text
        return "".join(self.streamed[r] for r in sorted(self.streamed))


@dataclass
class _Run:
    model: str = ""
    offline: bool = False
    status: str = "running"
    limits: Mapping[str, Any] = field(default_factory=dict)
    usage: Mapping[str, Any] = field(default_factory=dict)
    elapsed: float = 0.0
    slots: dict[str, _Slot] = field(default_factory=dict)
    run_items: list[dict[str, Any]] = field(default_factory=list)

    def slot(self, name: Any) -> _Slot | None:
        if name is None:
            return None
        key = str(name)
        if key not in self.slots:
            self.slots[key] = _Slot(key)
        return self.slots[key]

    def add(self, slot_name: Any, item: dict[str, Any], round_no: Any = None) -> None:
        slot = self.slot(slot_name)
        if slot is None:
            self.run_items.append(item)
        else:
            slot.items(round_no if isinstance(round_no, int) else None).append(item)


def _replay(events: Iterable[WireEvent]) -> _Run:
    run = _Run()
    tools: dict[str, dict[str, Any]] = {}
    for ev in events:
        kind, name = ev.get("kind"), ev.get("slot")
        if isinstance(ev.get("t"), int | float):
            run.elapsed = max(run.elapsed, float(ev["t"]))
        slot = run.slot(name)
        rnd = ev.get("round")
        if kind == "run_started":
            run.model, run.offline = str(ev.get("model", "")), bool(ev.get("offline"))
            run.limits = ev.get("limits") or {}
            for info in ev.get("slots") or ():
                s = run.slot(info.get("name"))
                if s is not None:
                    s.type = str(info.get("type", s.type))
        elif kind == "slot_started" and slot is not None:
            slot.type, slot.status = str(ev.get("slot_type", slot.type)), "running"
        elif kind == "token_delta" and slot is not None:
            r = rnd if isinstance(rnd, int) else 1
            slot.streamed[r] = slot.streamed.get(r, "") + str(ev.get("text", ""))
            slot.status = "running"
        elif kind == "thinking_delta" and slot is not None:
            items = slot.items(rnd)
            if items and items[-1]["type"] == "thinking":
                items[-1]["text"] += str(ev.get("text", ""))
            else:
                items.append({"type": "thinking", "text": str(ev.get("text", ""))})
        elif kind == "slot_retracted" and slot is not None:
            r = rnd if isinstance(rnd, int) else 1
            text = str(ev.get("text") or slot.streamed.get(r, ""))
            if ev.get("reason") == "stopped":
                slot.streamed.setdefault(r, text)
                slot.stopped = True
            else:
                slot.streamed.pop(r, None)
                if text:
                    slot.items(r).append({"type": "narration", "text": text, "reason": str(ev.get("reason", ""))})
        elif kind == "tool_started":
            item: dict[str, Any] | None = {"type": "tool", "name": str(ev.get("tool_name", "?")),
                                           "args": ev.get("args"), "status": "running"}
            assert item is not None
            tools[str(ev.get("call_id"))] = item
            run.add(name, item, rnd)
        elif kind == "tool_completed":
            item = tools.get(str(ev.get("call_id")))
            if item is None:
                item = {"type": "tool", "name": str(ev.get("tool_name", "?")), "args": None}
                run.add(name, item, rnd)
            item.update(status="ok" if ev.get("ok", True) else "error", result=ev.get("result"),
                        error=ev.get("error"), cached=bool(ev.get("was_cached")), ms=ev.get("elapsed_ms"))
        elif kind == "approval_requested":
            item = {"type": "approval", "name": str(ev.get("tool_name", "?")), "args": ev.get("args"),
                    "outcome": "not answered"}
            tools["approval:" + str(ev.get("call_id"))] = item
            run.add(name, item, rnd)
        elif kind == "approval_resolved":
            found = tools.get("approval:" + str(ev.get("call_id")))
            if found is not None:
                reason = ev.get("reason")
                found["outcome"] = "approved" if ev.get("approved") else ("denied" + (f": {reason}" if reason else ""))
        elif kind == "retrying":
            run.add(name, {"type": "note", "text": f"retrying (attempt {ev.get('attempt')}): {ev.get('reason', '')}"},
                    rnd)
        elif kind == "run_warning":
            run.add(name, {"type": "warning", "text": str(ev.get("message", ""))}, rnd)
        elif kind == "guard_tripped" and slot is not None:
            slot.status = "halted"
            slot.items(None).append({"type": "warning", "text": f"guard tripped: {ev.get('reason', '')}"})
        elif kind == "checkpoint_reached":
            run.add(name, {"type": "note", "text": f"checkpoint {ev.get('name') or ''}".strip()})
        elif kind == "slot_completed" and slot is not None:
            slot.status, slot.value, slot.has_value = "completed", ev.get("value"), True
            final = ev.get("text", ev.get("value"))  # wire.py drops `text` when it equals a str value
            slot.final_text = final if isinstance(final, str) else None
        elif kind == "slot_failed" and slot is not None:
            slot.status, slot.error = str(ev.get("status", "failed")), ev.get("error")
            if ev.get("partial") and not slot.answer():
                slot.streamed[max(slot.streamed, default=1)] = str(ev["partial"])
            slot.stopped = bool(slot.answer())
        elif kind == "usage_updated":
            run.usage = ev.get("usage") or run.usage
        elif kind == "processing_complete":
            run.status = str(ev.get("status", "failed"))
            run.usage = ev.get("usage") or run.usage
            for s in run.slots.values():
                if s.status == "running":
                    s.status = "completed" if run.status == "completed" else run.status
    return run


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _pre(text: str, label: str | None = None) -> str:
    """Preformatted text under an optional label; long text collapsed behind its label."""
    body = f"<pre>{_e(text)}</pre>"
    if len(text) <= LONG:
        return body if label is None else f'<div class="ac-muted">{_e(label)}</div>{body}'
    return f"<details><summary>{_e(label or 'show')} ({len(text):,} chars)</summary>{body}</details>"


def _usage_text(usage: Mapping[str, Any]) -> str:
    def n(count: Any, noun: str) -> str:
        return f"{count} {noun}" + ("" if count == 1 else "s")

    parts = [n(usage.get("requests", 0), "request"), n(usage.get("tool_calls", 0), "tool call"),
             f"tokens {usage.get('input_tokens', 0):,} in / {usage.get('output_tokens', 0):,} out"]
    if isinstance(usage.get("cost"), int | float):
        parts.append(f"${usage['cost']:.4f}")
    return " · ".join(parts)


def _item_html(item: Mapping[str, Any]) -> str:
    kind = item["type"]
    if kind == "thinking":
        return (f'<details class="ac-thinking"><summary>thinking ({len(item["text"]):,} chars)</summary>'
                f"<pre>{_e(item['text'])}</pre></details>")
    if kind == "narration":
        label = _RETRACT_LABEL.get(item["reason"], f"retracted ({item['reason']})")
        return f'<div class="ac-narration"><em>{_e(label)}</em><br>{_e(item["text"])}</div>'
    if kind == "tool":
        status = item.get("status", "running")
        head = [f"tool <strong><code>{_e(item['name'])}</code></strong>"]
        if status == "error":
            head.append('<span class="ac-error">error</span>')
        elif status == "running":
            head.append('<span class="ac-muted">did not finish</span>')
        if item.get("cached"):
            head.append("cached")
        if isinstance(item.get("ms"), int | float):
            head.append(f"{item['ms']:.0f} ms" if item["ms"] >= 1 else "&lt;1 ms")
        out = [f'<div class="ac-tool"><div>{" · ".join(head)}</div>']
        if item.get("args") not in (None, {}):
            out.append(_pre(_json(item["args"]), "arguments"))
        if item.get("error"):
            out.append(f'<div class="ac-error">{_e(item["error"])}</div>')
        if status != "running" and (item.get("result") or status == "ok"):
            out.append(_pre(str(item.get("result") or ""), "result"))
        out.append("</div>")
        return "".join(out)
    if kind == "approval":
        args = _pre(_json(item["args"])) if item.get("args") else ""
        return (f'<div class="ac-tool">approval for <strong><code>{_e(item["name"])}</code></strong>: '
                f"{_e(item['outcome'])}{args}</div>")
    if kind == "warning":
        return f'<div class="ac-error">⚠ {_e(item["text"])}</div>'
    return f'<div class="ac-muted">{_e(item["text"])}</div>'


def _paragraphs(text: str) -> str:
    blocks = [b for b in text.replace("\r\n", "\n").split("\n\n") if b.strip()]
    return "".join("<p>" + "<br>".join(_e(line) for line in b.strip("\n").split("\n")) + "</p>" for b in blocks)


def render_html(events: Iterable[WireEvent], provenance: Mapping[str, Any] | None = None) -> str:
    """The whole run as self-contained, escaped HTML (a `<style>` block plus semantic markup)."""
    run = _replay(events)
    prov = provenance or {}
    model = run.model or str(prov.get("model", ""))
    head = [f"<strong>%%agent</strong> · model <code>{_e(model or '?')}</code>"]
    if run.offline:
        head.append("offline default model")
    head += [f"<strong>{_e(_STATUS_LABEL.get(run.status, run.status))}</strong>", f"{run.elapsed:.1f} s",
             _e(_usage_text(run.usage))]
    out = [f'<div class="agentcell-static" data-status="{_e(run.status)}">', f"<style>{_CSS}</style>",
           f'<div class="ac-head">{" · ".join(head)}</div>']
    out += [_item_html(item) for item in run.run_items]
    for slot in run.slots.values():
        out.append(f'<div class="ac-slot" data-slot="{_e(slot.name)}">'
                   f"<div><strong>{_e(slot.name)}</strong> <span class=\"ac-muted\">{_e(slot.type)} · "
                   f"{_e(_STATUS_LABEL.get(slot.status, slot.status))}</span></div>")
        for r in sorted(slot.rounds):
            out += [_item_html(item) for item in slot.rounds[r]]
        typed = slot.has_value and slot.type.lower() not in ("text", "respond", "str", "")
        if typed:
            out.append(f'<div class="ac-answer">{_pre(_json(slot.value))}</div>')
        elif slot.answer():
            stopped = '<div class="ac-muted"><em>partial answer</em></div>' if slot.stopped else ""
            out.append(f'<div class="ac-answer">{_paragraphs(slot.answer())}{stopped}</div>')
        if slot.error:
            out.append(f'<div class="ac-error">{_e(slot.error)}</div>')
        out.append("</div>")
    out.append("</div>")
    return "\n".join(out)


def render_text(events: Iterable[WireEvent], provenance: Mapping[str, Any] | None = None) -> str:
    """The run as plain text: header, tool calls and answers (the last-resort fallback)."""
    run = _replay(events)
    model = run.model or str((provenance or {}).get("model", ""))
    lines = [f"%%agent · {model or '?'} · {_STATUS_LABEL.get(run.status, run.status)} · {run.elapsed:.1f} s · "
             f"{_usage_text(run.usage)}"]
    lines += [f"! {i['text']}" for i in run.run_items if "text" in i]
    for slot in run.slots.values():
        lines.append(f"\n[{slot.name}] ({slot.type}, {_STATUS_LABEL.get(slot.status, slot.status)})")
        for r in sorted(slot.rounds):
            for item in slot.rounds[r]:
                if item["type"] == "tool":
                    result = str(item.get("error") or item.get("result") or "")
                    result = result if len(result) <= 300 else result[:297] + "..."
                    lines.append(f"  tool {item['name']}({json.dumps(item.get('args') or {}, default=repr)})"
                                 f" -> {result}")
                elif item["type"] == "approval":
                    lines.append(f"  approval {item['name']}: {item['outcome']}")
                elif item["type"] in ("warning", "note"):
                    lines.append(f"  {item['text']}")
        if slot.has_value and slot.type.lower() not in ("text", "respond", "str", ""):
            lines.append(_json(slot.value))
        elif slot.answer():
            lines.append(slot.answer() + (" [partial]" if slot.stopped else ""))
        if slot.error:
            lines.append(f"  error: {slot.error}")
    return "\n".join(lines)
