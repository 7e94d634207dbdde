"""A run on a time axis: each request (time to first token, streaming), each tool call, each wait, to scale.

Built from the run's wire events (each carries `t`, seconds on the run's clock), not from the transcript:
the times are in the events. `js/src/teach/timeline.js` is the twin for the live teaching view; both
write times as the widget does (`format_ms`, `format_elapsed` mirror `js/src/format.js`).

* A request runs from its `model_request` (or the end of the step pause before it) to its
  `model_response`; its first streamed text or thinking marks the time to first token.
* A back-off runs from its `retrying` event for `delay_s` seconds.
* A tool call runs from `tool_started` to `tool_completed`; calls that ran together overlap.
* Waits: a step pause (`step_paused` → `step_resumed`), an approval (`approval_requested` → `_resolved`).

Anything an injected fault caused carries `injected`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

BarKind = Literal["request", "backoff", "tool", "step", "approval"]
_WAITS: tuple[BarKind, ...] = ("backoff", "step", "approval")


def format_ms(ms: float) -> str:
    """As `formatMs` in `js/src/format.js`: `840 ms`, `1.24 s`, `12.3 s`."""
    if ms < 1000:
        return f"{math.floor(ms + 0.5)} ms"  # JavaScript's Math.round (Python's round() rounds half to even)
    return f"{ms / 1000:.{2 if ms < 10000 else 1}f} s"


def format_elapsed(seconds: float) -> str:
    """As `formatElapsed` in `js/src/format.js`: `4.2 s`, `3 m 05 s`, `1 h 02 m`."""
    s = max(0.0, seconds)
    if s < 60:
        return f"{s:.1f} s"
    m = int(s // 60)
    if m < 60:
        return f"{m} m {int(s - m * 60):02d} s"
    return f"{m // 60} h {m % 60:02d} m"


@dataclass(slots=True, kw_only=True)
class Bar:
    kind: BarKind
    label: str
    start: float
    end: float | None = None
    first: float | None = None
    """A request's first streamed token (time to first token = `first - start`)."""
    slot: str | None = None
    round: int = 0
    injected: bool = False
    error: bool = False


@dataclass(slots=True, kw_only=True)
class Timeline:
    bars: list[Bar] = field(default_factory=list)
    t0: float = 0.0
    t1: float = 0.0

    @property
    def span(self) -> float:
        return max(self.t1 - self.t0, 1e-9)

    def total(self, kinds: Iterable[BarKind]) -> float:
        wanted = set(kinds)
        return sum((b.end or self.t1) - b.start for b in self.bars if b.kind in wanted)


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class _Builder:
    def __init__(self) -> None:
        self.tl = Timeline()
        self.requests: dict[Any, Bar] = {}
        self.tools: dict[Any, Bar] = {}
        self.waits: dict[Any, Bar] = {}
        self.faulted: set[Any] = set()
        self.model_fault: dict[Any, bool] = {}
        self.started = False

    def add(self, ev: Mapping[str, Any]) -> None:
        t = _num(ev.get("t"))
        if t is None:
            return
        if not self.started:
            self.tl.t0, self.started = t, True
        self.tl.t1 = max(self.tl.t1, t)
        handler = getattr(self, f"on_{ev.get('kind')}", None)
        if handler is not None:
            handler(ev, t)

    def _bar(self, bar: Bar) -> Bar:
        self.tl.bars.append(bar)
        return bar

    def on_model_request(self, ev: Mapping[str, Any], t: float) -> None:
        slot, rnd = ev.get("slot"), int(_num(ev.get("round")) or 0)
        self.requests[slot] = self._bar(Bar(kind="request", label=f"request {rnd}", start=t, slot=slot, round=rnd,
                                            injected=self.model_fault.pop(slot, False)))

    def on_token_delta(self, ev: Mapping[str, Any], t: float) -> None:
        bar = self.requests.get(ev.get("slot"))
        if bar is not None and bar.end is None and bar.first is None:
            bar.first = t

    on_thinking_delta = on_token_delta

    def on_model_response(self, ev: Mapping[str, Any], t: float) -> None:
        bar = self.requests.pop(ev.get("slot"), None)
        if bar is not None:
            bar.end = t

    def on_request_completed(self, ev: Mapping[str, Any], t: float) -> None:
        if ev.get("ended") in ("stopped", "failed"):
            bar = self.requests.pop(ev.get("slot"), None)
            if bar is not None:
                bar.end, bar.error = t, True

    def on_retrying(self, ev: Mapping[str, Any], t: float) -> None:
        delay = _num(ev.get("delay_s")) or 0.0
        reason = str(ev.get("reason") or "")
        injected = "injected" in reason
        self._bar(Bar(kind="backoff", label=f"back-off after {reason}", start=t, end=t + delay, slot=ev.get("slot"),
                      injected=injected))
        self.tl.t1 = max(self.tl.t1, t + delay)

    def on_fault_injected(self, ev: Mapping[str, Any], t: float) -> None:
        if ev.get("target") == "model":
            bar = self.requests.get(ev.get("slot"))
            if bar is not None:
                bar.injected = True
        else:
            self.faulted.add(ev.get("call_id"))

    def on_tool_started(self, ev: Mapping[str, Any], t: float) -> None:
        call = ev.get("call_id")
        name = str(ev.get("tool_name") or "?")
        label = f"{ev['server']} · {name}" if ev.get("server") else name  # an MCP tool: its server, as on its card
        self.tools[call] = self._bar(Bar(kind="tool", label=label, start=t,
                                         slot=ev.get("slot"), round=int(_num(ev.get("round")) or 0),
                                         injected=call in self.faulted))

    def on_tool_completed(self, ev: Mapping[str, Any], t: float) -> None:
        bar = self.tools.pop(ev.get("call_id"), None)
        if bar is not None:
            bar.end, bar.error = t, ev.get("ok") is False
            bar.injected = bar.injected or "injected" in str(ev.get("error") or "")

    def on_step_paused(self, ev: Mapping[str, Any], t: float) -> None:
        what = f"{ev.get('tool_name')}()" if ev.get("before") == "tool" else f"request {ev.get('round')}"
        self.waits[("step", ev.get("number"))] = self._bar(
            Bar(kind="step", label=f"paused before {what}", start=t, slot=ev.get("slot")))

    def on_step_resumed(self, ev: Mapping[str, Any], t: float) -> None:
        bar = self.waits.pop(("step", ev.get("number")), None)
        if bar is not None:
            bar.end = t
            request = self.requests.get(ev.get("slot"))
            if request is not None and request.first is None and request.start <= bar.start:
                request.start = t  # the request went out when the pause ended

    def on_approval_requested(self, ev: Mapping[str, Any], t: float) -> None:
        self.waits[("approval", ev.get("call_id"))] = self._bar(
            Bar(kind="approval", label=f"approval of {ev.get('tool_name')}", start=t, slot=ev.get("slot")))

    def on_approval_resolved(self, ev: Mapping[str, Any], t: float) -> None:
        bar = self.waits.pop(("approval", ev.get("call_id")), None)
        if bar is not None:
            bar.end = t


def timeline(events: Iterable[Mapping[str, Any]]) -> Timeline:
    """The run's timeline from its wire events (in order, each with `t`)."""
    builder = _Builder()
    for ev in events:
        if isinstance(ev, Mapping):
            builder.add(ev)
    return builder.tl


def _row(bar: Bar, tl: Timeline) -> str:
    e = html.escape
    end = bar.end if bar.end is not None else tl.t1
    left, width = (bar.start - tl.t0) / tl.span * 100, max(0.6, (end - bar.start) / tl.span * 100)
    said = [f"{format_ms((bar.start - tl.t0) * 1000)} → {format_ms((end - tl.t0) * 1000)}",
            format_ms((end - bar.start) * 1000)]
    marks = ""
    if bar.first is not None:
        said.append(f"first token after {format_ms((bar.first - bar.start) * 1000)}")
        at = (bar.first - bar.start) / max(end - bar.start, 1e-9) * 100
        marks = f'<span class="ac-tl-ttft" style="left:{at:.2f}%"></span>'
    if bar.error:
        said.append("ended in an error")
    badge = ' <span class="agentcell-badge ac-injected">injected</span>' if bar.injected else ""
    aria = f"{bar.label}: {', '.join(said)}" + (", injected" if bar.injected else "")
    flag = ' data-injected="true"' if bar.injected else ""
    return (
        f'<li class="ac-tl-row" data-kind="{bar.kind}"{flag}>'
        f'<span class="ac-tl-label">{e(bar.label)}{badge}</span>'
        f'<span class="ac-tl-track"><span class="ac-tl-bar" role="img" aria-label="{e(aria)}" '
        f'style="left:{left:.2f}%;width:{min(width, 100 - left):.2f}%">{marks}</span></span>'
        f'<span class="ac-tl-said">{e(", ".join(said))}</span></li>'
    )


def timeline_html(tl: Timeline) -> str:
    """The timeline as HTML: one row per bar on a common axis, then the totals."""
    if not tl.bars:
        return ""
    totals = (
        f"total {format_elapsed(tl.t1 - tl.t0)} · model requests {format_ms(tl.total(['request']) * 1000)} · "
        f"tools {format_ms(tl.total(['tool']) * 1000)} · waits {format_ms(tl.total(_WAITS) * 1000)}"
    )
    rows = "".join(_row(bar, tl) for bar in sorted(tl.bars, key=lambda b: b.start))
    return (
        '<section class="ac-timeline" aria-label="the run on a time axis"><h4 class="ac-section-title">Timeline</h4>'
        f'<ol class="ac-tl-rows">{rows}</ol><p class="ac-tl-totals">{html.escape(totals)}</p></section>'
    )


def lesson_css() -> str:
    """The stylesheet of lesson mode (the step bar, the cell, the timeline), shared with the widget."""
    return resources.files("agentcell").joinpath("lesson.css").read_text()
