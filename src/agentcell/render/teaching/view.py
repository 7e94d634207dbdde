"""The teaching view without a kernel: the static twin of `js/src/view/teaching.js` + `js/src/teach/`.

What the model was offered (each tool as a Python signature with its docstring, the JSON schema one
`<details>` away), then each slot's rounds in three lanes — your code & tools | agentcell | model —
with the request as role-labelled bubbles (earlier ones folded), the response, the tool runs (time
bars that show which ran together; the error as the model read it) and agentcell's interventions as
named markers with a "why" that expands; then each round's wire in three formats. Same words
(`teaching.json`), same classes and stylesheet (`teaching.css`) as the widget. Every piece of text is
escaped: model and tool text never becomes markup.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from ...transcript import Transcript
from ..items import e, server_note
from ..timeline import format_ms
from .model import Json, LessonRound, LessonSlot, lesson_slot, offered_tools, words
from .signature import python_source
from .wire import wire_html


@functools.cache
def teaching_css() -> str:
    """The lesson stylesheet shared with the widget."""
    return resources.files("agentcell").joinpath("teaching.css").read_text()


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _k(n: Any) -> str:
    n = n if isinstance(n, int | float) else 0
    return str(round(n)) if abs(n) < 1000 else f"{n / 1000:.1f}k"


def _text(cls: str, text: str) -> str:
    return f'<div class="ac-text {cls}">{e(text)}</div>'


def _tag(lane: str, arrow: str | None = None) -> str:
    return f'<span class="ac-lane-tag" data-lane="{lane}">{e(arrow or words()["lanes"][lane])}</span>'


def _message_text(m: Any) -> str:
    if not isinstance(m, dict):
        return str(m)
    content = m.get("content")
    parts = [content if isinstance(content, str) else _parts_text(content) if isinstance(content, list) else ""]
    for c in m.get("tool_calls") or []:
        fn = c.get("function", {}) if isinstance(c, dict) else {}
        parts.append(f"{fn.get('name', '?')}({fn.get('arguments', '')})")
    return "\n".join(p for p in parts if p)


_PART_LABELS = {"image_url": "[image]", "file": "[document]", "input_audio": "[audio]"}
"""A content part that is not text, as a request's bubble shows it (as `messageText` in js/src/teach/messages.js)."""


def _parts_text(content: list[Any]) -> str:
    """A content-part list (text, images, files) as a bubble's text: each part that is not text as its label."""
    out = []
    for c in content:
        if isinstance(c, dict) and isinstance(c.get("text"), str):
            out.append(c["text"])
        else:
            kind = c.get("type") if isinstance(c, dict) else None
            label = _PART_LABELS.get(kind) if isinstance(kind, str) else None
            out.append(label or json.dumps(c, ensure_ascii=False, default=repr))
    return "\n".join(out)


def _bubble(m: Json, fresh: bool) -> str:
    role = str(m.get("role", "?"))
    text = _message_text(m)
    shown = ("assistant · tool calls" if role == "assistant" and m.get("tool_calls") else
             f"tool result · {m.get('tool_call_id')}" if role == "tool" else role)
    new = '<span class="ac-new">new</span>' if fresh else ""
    flag = ' data-new="true"' if fresh else ""
    return (f'<div class="ac-bubble" data-role="{e(role)}"{flag}>'
            f'<div class="ac-bubble-head"><span class="ac-role">{e(shown)}</span>{new}'
            f'<span class="ac-tok">~{_k(-(-len(text) // 4))} tok</span></div>{_text("ac-bubble-text", text)}</div>')


def marker_html(m: Json) -> str:
    """One intervention: name, one sentence, the text the model received, and the "why"."""
    reason = f'<p class="ac-marker-reason">Why now: {e(m["reason"])}.</p>' if m["kind"] == "final_round" else ""
    text = f'<div class="ac-marker-text">{_text("ac-received", m["text"])}</div>' if m.get("text") else ""
    why = f'<details class="ac-why"><summary>why?</summary><p>{e(m["why"])}</p></details>' if m.get("why") else ""
    return (f'<div class="ac-marker" data-marker="{e(m["kind"])}" role="note" aria-label="agentcell: {e(m["title"])}">'
            f'<div class="ac-marker-head">{_tag("agentcell")}<strong class="ac-marker-title">{e(m["title"])}</strong>'
            f'</div><p class="ac-marker-say">{e(m["say"])}</p>{reason}{text}{why}</div>')


def _request(r: LessonRound) -> str:
    req = r.request
    assert req is not None
    earlier = req.messages[:req.earlier]
    fold = (f'<details class="ac-earlier"><summary>{_count(len(earlier), "earlier message")}</summary>'
            f'{"".join(_bubble(m, False) for m in earlier)}</details>') if earlier else ""
    chips = " ".join(f'<code class="ac-chip">{e(t)}</code>' for t in r.offered or [])
    offered = (f'<div class="ac-offered">tools offered: {chips}</div>' if r.offered
               else '<div class="ac-offered ac-none">no tools offered in this request</div>')
    head = (f"request {r.round}: {_count(len(req.messages), 'message')}, "
            f"{_count(len(req.messages) - req.earlier, 'new one')}")
    return (f'<div class="ac-step ac-request" data-lane="agentcell" data-step="request">'
            f'<div class="ac-step-head">{_tag("agentcell", "agentcell → model")}<span>{e(head)}</span></div>'
            f'{fold}{"".join(_bubble(m, True) for m in req.fresh)}{offered}</div>')


ANSWER_IN_SAVED_LESSON = 2_000
"""Characters of a round's answer shown in the folded teaching view of the saved transcript: the answer is
in full right below it (the slot's answer). The 50,000-token answer of `bench/browser.py` otherwise doubled the
saved output (565 KB), which JupyterLab parses again whenever the cell's outputs change (its table of contents)."""


def _answer_box(text: str, brief: bool) -> str:
    if not brief or len(text) <= ANSWER_IN_SAVED_LESSON:
        return _text("ac-answer-box", text)
    more = len(text) - ANSWER_IN_SAVED_LESSON
    return (f'{_text("ac-answer-box", text[:ANSWER_IN_SAVED_LESSON] + " …")}'
            f'<div class="ac-caption">{e(f"{more:,} more characters: the whole answer is below")}</div>')


def _response(r: LessonRound, brief: bool = False) -> str:
    m, body = r.model, []
    for t in m["thinking"]:
        body.append(f'<details class="ac-thinking"><summary>thinking ({_count(len(t), "char")})</summary>'
                    f'{_text("ac-thinking-text", t)}</details>')
    for n in m["narration"]:
        body.append(f'<div class="ac-narration"><span class="ac-caption">text (retracted: narration):</span>'
                    f'{_text("ac-narration-text", n["text"])}</div>')
    if m["answer"]:
        body.append(f'<div class="ac-answer-text"><span class="ac-caption">text (the answer):</span>'
                    f'{_answer_box(m["answer"], brief)}</div>')
    for c in m["calls"]:
        args = c["args"] if isinstance(c["args"], str) else json.dumps(c["args"] or {}, ensure_ascii=False)
        caption = "answers through:" if c.get("output") else "calls:"
        body.append(f'<div class="ac-call" data-tool="{e(c["name"])}"><span class="ac-caption">{caption}</span> '
                    f'<code>{e(c["name"])}({e(args)})</code></div>')
    return (f'<div class="ac-step ac-response" data-lane="model" data-step="response"><div class="ac-step-head">'
            f'{_tag("model", "model → agentcell")}<span>response</span></div>{"".join(body)}</div>')


def _server(run: Json) -> str:
    server = run.get("server")
    return f'<span class="ac-caption ac-run-server">{e(server_note(server))}</span>' if server else ""


def _run(run: Json, t0: float, span: float) -> str:
    args = json.dumps(run.get("args") or {}, ensure_ascii=False, default=repr)
    badges = "".join([' <span class="agentcell-badge agentcell-cached">cached</span>' if run.get("cached") else "",
                      ' <span class="agentcell-badge agentcell-error-badge">error</span>'
                      if run.get("status") == "error" else ""])
    ms = run.get("elapsed_ms")
    out = [f'<div class="ac-run" data-tool="{e(run["name"])}" data-status="{e(run.get("status"))}">'
           f'<div class="ac-run-head"><code class="ac-run-call">{e(run["name"])}({e(args)})</code>'
           f'{_server(run)}{badges}'
           + (f'<span class="ac-run-ms">{format_ms(ms)}</span>' if isinstance(ms, int | float) else "") + "</div>"]
    if span > 0 and run.get("start_t") is not None and run.get("end_t") is not None:
        left, width = (run["start_t"] - t0) / span * 100, max(1.5, (run["end_t"] - run["start_t"]) / span * 100)
        frm, to = round((run["start_t"] - t0) * 1000), round((run["end_t"] - t0) * 1000)
        together = f", at the same time as {', '.join(run['with'])}" if run["with"] else ""
        flag = ' data-concurrent="true"' if run["with"] else ""
        out.append(f'<div class="ac-timebar" role="img" aria-label="{e(run["name"])} ran from {frm} ms to {to} ms'
                   f'{e(together)}" data-from="{frm}" data-to="{to}"{flag}>'
                   f'<span class="ac-timebar-fill" style="left:{min(98.5, left):.2f}%;width:{min(100, width):.2f}%">'
                   "</span></div>")
    if run.get("status") == "error":
        shown = run.get("fed_back") or run.get("result") or run.get("error") or ""
        out.append(f'<div class="ac-run-result"><span class="ac-caption">error fed back — the model reads:</span>'
                   f'{_text("ac-result-box", str(shown))}</div>')
    elif run.get("status") == "ok":
        out.append(f'<div class="ac-run-result"><span class="ac-caption">→ result:</span>'
                   f'{_text("ac-result-box", str(run.get("result") or ""))}</div>')
    return "".join(out) + "</div>"


def _tools(r: LessonRound) -> str:
    timed = [x for x in r.tool_runs if x.get("start_t") is not None and x.get("end_t") is not None]
    t0 = min((x["start_t"] for x in timed), default=0.0)
    span = max((x["end_t"] for x in timed), default=0.0) - t0 if timed else 0.0
    together = sum(1 for x in r.tool_runs if x["with"])
    note = (f'<div class="ac-concurrent">{together} tools ran at the same time (overlapping bars)</div>'
            if together else "")
    head = f"{_count(len(r.tool_runs), 'call')} run" + (f" · {format_ms(span * 1000)} in all" if span > 0 else "")
    return (f'<div class="ac-step ac-tools" data-lane="tools" data-step="tools"><div class="ac-step-head">'
            f'{_tag("tools", "agentcell → your tools")}<span>{e(head)}</span></div>{note}'
            f'{"".join(_run(x, t0, span) for x in r.tool_runs)}</div>')


def _title(r: LessonRound) -> str:
    parts = [f"round {r.round}"]
    if r.offered is not None:
        parts.append(f"{_count(len(r.offered), 'tool')} offered" if r.offered else "no tools offered")
    if r.usage:
        est = "~" if r.usage.get("estimated") is True else ""  # counted here: the provider reported none
        parts.append(f"{est}{_k(r.usage.get('input_tokens'))} in / {est}{_k(r.usage.get('output_tokens'))} out tokens")
    if isinstance(r.latency_ms, int | float) and r.latency_ms > 0:
        parts.append(format_ms(r.latency_ms))  # times written as the widget writes them
    return f'<h5 class="ac-round-title jp-toc-ignore">{e(" · ".join(parts))}</h5>'


def round_html(r: LessonRound, *, model: str, tools: list[Json], copy: bool = False, brief: bool = False) -> str:
    retries = "".join(marker_html(m) for m in r.markers if m["kind"] == "retry")
    rest = "".join(marker_html(m) for m in r.markers if m["kind"] != "retry")
    return (f'<div class="ac-seq" data-round="{r.round}" role="group" aria-label="round {r.round}">{_title(r)}{retries}'
            f'{_request(r) if r.request else ""}{_response(r, brief)}{_tools(r) if r.tool_runs else ""}{rest}'
            f'{wire_html(r, model=model, tools=tools, copy=copy)}</div>')


def slot_html(lesson: LessonSlot, *, model: str, tools: list[Json], copy: bool = False, brief: bool = False) -> str:
    heads = "".join(f'<div class="ac-lane-head" data-lane="{k}">{e(v)}</div>' for k, v in words()["lanes"].items()
                    if k in ("tools", "agentcell", "model"))
    name = e(lesson.name)
    return (f'<section class="ac-lesson-slot" data-slot="{name}" aria-label="the loop of slot {name}">'
            f'<h4 class="ac-lesson-slot-title jp-toc-ignore">slot {e(lesson.name)} '
            f'<span class="ac-caption">{e(lesson.type)} · '
            f'{_count(len(lesson.rounds), "round")}</span></h4><div class="ac-lane-heads">{heads}</div>'
            + "".join(round_html(r, model=model, tools=tools, copy=copy, brief=brief) for r in lesson.rounds)
            + "".join(marker_html(m) for m in lesson.markers) + "</section>")


def tools_html(tools: list[Json]) -> str:
    if not tools:
        return '<p class="ac-caption">no tools offered</p>'
    items = []
    for t in tools:
        sig = (f'<pre class="ac-signature" aria-label="Python signature of {e(t["name"])}">'
               f'{e(python_source(t["name"], t["description"], t["schema"]))}</pre>') if t["schema"] is not None else ""
        schema = (f'<details class="agentcell-tool-schema"><summary>JSON schema (what the model is sent)</summary>'
                  f'<pre>{e(json.dumps(t["schema"], indent=2, ensure_ascii=False))}</pre></details>'
                  if t["schema"] is not None else "")
        server = (f'<span class="agentcell-tool-server"> · {e(server_note(t["server"]))}</span>'
                  if t.get("server") else "")
        items.append(f'<li class="agentcell-tool-decl" data-tool="{e(t["name"])}"><code class="agentcell-tool-name">'
                     f'{e(t["name"])}</code>{server}{sig}{schema}</li>')
    return f'<p class="ac-caption">{_count(len(tools), "tool")} offered to the model:</p><ul>{"".join(items)}</ul>'


def teaching_html(tr: Transcript, *, copy: bool = False, brief: bool = False) -> str:
    """The whole teaching view of a run as HTML (no `<style>`: see `teaching_css()`).

    `brief`: a long answer is cut to its start (`ANSWER_IN_SAVED_LESSON`), where the full one follows it.
    Headings carry `jp-toc-ignore`: they are the run's, not the notebook's sections.
    """
    tools = offered_tools(tr)
    slots = [lesson_slot(tr, s) for s in tr.slots.values() if s.rounds or s.status != "pending"]
    body = "".join(slot_html(s, model=tr.model, tools=tools, copy=copy, brief=brief) for s in slots)
    return (f'<div class="ac-teaching ac-lessonroot"><section class="ac-offer" aria-label="what the model was offered">'
            f'<h4 class="ac-section-title jp-toc-ignore">What the model was offered</h4>{tools_html(tools)}</section>'
            f'<section class="ac-loop" aria-label="the loop, round by round">'
            f'<h4 class="ac-section-title jp-toc-ignore">The loop, round by round</h4>{body}</section></div>')


def saved_teaching(tr: Transcript) -> str:
    """The teaching view, folded, for the saved transcript ("" for a run without teaching events).

    Its stylesheet (`teaching_css()`) goes into the saved view's one `<style>`.
    """
    asked = any(it["type"] == "payload" for s in tr.slots.values() for rd in s.rounds.values() for it in rd.items)
    if not asked:
        return ""
    return (f'<details class="ac-teach-saved"><summary>Teaching view: the loop, round by round</summary>'
            f"{teaching_html(tr, brief=True)}</details>")
