"""Browser benchmarks in JupyterLab + Debian's Chromium: Stop click → server disconnect, and the cost
of streaming a 50,000-token Markdown answer into the widget.

Run: `/work/venv/bin/python bench/browser.py` (about 2 minutes; `--quick` for a smoke run).
Writes `bench/results/browser.json` and prints a table. Uses `tests/browser/lab.py`'s JupyterLab
server (isolated config, random token) and Playwright pointed at /usr/bin/chromium (never
`playwright install`).

1. **Stop click.** A scripted OpenAI-compatible server (`tests/openai_server.py`) in this process
   streams a long answer (a piece every 10 ms) to `%%agent -m bench_model` (pydantic-ai's
   `OpenAIChatModel` pointed at it). Once words show in the widget, the Stop button is clicked with
   a real mouse event at its centre (`page.mouse.click`, one CDP round trip); the figure is the
   server's `disconnected_at` minus the moment the click was issued, and click → the widget showing
   `stopped`.
2. **Streaming cost.** A FunctionModel streams 50,000 tokens of Markdown (headings, lists, prose,
   fenced code blocks) as fast as the kernel produces them. During the run a `PerformanceObserver`
   collects `longtask` entries, split into *during* the stream and *at the end* (a task that ends
   after the widget's root turned `completed`, seen by a `MutationObserver` — the final render is in
   that task or after it); CDP `Performance.getMetrics` gives script, layout, style and task
   durations; the comm messages the page receives are counted per second from its websocket.
   Baselines: the same page idle for the same wall time, and **JupyterLab's own**: the same tokens
   from the same generator printed to stdout by a plain cell (`print(token, end="")`), once as fast
   as the kernel prints them and once paced to the widget run's token rate. The long tasks *during*
   include JupyterLab running the cell; `long_tasks_over_50ms_before_output` counts those of them that
   ended before the kernel's first output message (the widget's `comm_open`, the print's first
   `stream`), when nothing of the widget exists yet.

`--only stream` skips the Stop clicks; `--only stop` the streaming cost.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import contextlib

import _common

from tests.browser import lab as labmod
from tests.openai_server import FakeOpenAI, Reply, Text

GOAL_LONG_TASK_MS = 50.0

SETUP = """
import asyncio
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

bench_model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url={base_url!r}, api_key="bench"))

def markdown_tokens(n):
    words = []
    i = 0
    while len(words) < n:
        section = (
            f"## Section {{i}}\\n\\nThis part explains step {{i}} of the method, with *emphasis*, `inline code` and "
            f"a [link](https://example.org/{{i}}). The loop calls a tool, reads the result and decides again.\\n\\n"
            f"- first point about item {{i}}\\n- second point, a little longer than the first one\\n"
            f"- third point with **bold** text\\n\\n"
            f"```python\\ndef step_{{i}}(rows):\\n    total = 0\\n    for row in rows:\\n"
            f"        total += row * {{i}}\\n"
            f"    return total\\n```\\n\\n"
        )
        words.extend(w + " " for w in section.split(" "))
        i += 1
    return words[:n]

def markdown_model(n):
    tokens = markdown_tokens(n)
    async def fn(messages, info):
        for i, token in enumerate(tokens):
            if i % 200 == 0:
                await asyncio.sleep(0)
            yield token
    return FunctionModel(stream_function=fn)

long_md_model = markdown_model({tokens})

# JupyterLab loads MathJax when it first typesets an output: do that here, not in a measured run.
from IPython.display import HTML, display
display(HTML("<p>warm-up</p>"))

async def print_tokens(n, seconds=0.0):
    # JupyterLab's own baseline: the same tokens printed to stdout, spread over `seconds`.
    tokens = markdown_tokens(n)
    pause = seconds * 200 / n
    for i, token in enumerate(tokens):
        if i % 200 == 0:
            await asyncio.sleep(pause)
        print(token, end="")
"""

STOP_CELL = "%%agent -m bench_model\nTell me a very long story about a lighthouse keeper.\n[[answer]]"
STREAM_CELL = "%%agent -m long_md_model --max-tokens 1000000\nWrite the long guide.\n[[answer]]"

PRINT_CELL = "await print_tokens({tokens}, {seconds})"

OBSERVE = """() => {
  if (window.__bench && window.__bench.obs) window.__bench.obs.disconnect();
  if (window.__bench && window.__bench.mo) window.__bench.mo.disconnect();
  window.__bench = { longtasks: [], completedAt: null };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.longtasks.push({ start: e.startTime, duration: e.duration });
  });
  obs.observe({ type: "longtask", buffered: false });
  window.__bench.obs = obs;
  // The moment a widget's root turns `completed` (the answer's final render runs in that task).
  const mo = new MutationObserver((records) => {
    for (const r of records) {
      if (window.__bench.completedAt === null && r.target.classList?.contains("agentcell")
          && r.target.getAttribute("data-status") === "completed") window.__bench.completedAt = performance.now();
    }
  });
  mo.observe(document.body, { subtree: true, attributes: true, attributeFilter: ["data-status"] });
  window.__bench.mo = mo;
  // Long animation frames (Chromium's LoAF): which scripts a long frame ran, at no tracing cost.
  window.__bench.frames = [];
  if (window.__bench_lo) window.__bench_lo.disconnect();
  try {
    window.__bench_lo = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__bench.frames.push({
        start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
        render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
        scripts: e.scripts.map((x) => ({ invoker: x.invoker, fn: x.sourceFunctionName,
          url: (x.sourceURL || "").slice(-40), ms: Math.round(x.duration),
          forced_layout_ms: Math.round(x.forcedStyleAndLayoutDuration) })) });
    });
    window.__bench_lo.observe({ type: "long-animation-frame", buffered: false });
  } catch (err) { /* no LoAF in this browser */ }
  window.__bench.t0 = performance.now();
  return true;
}"""

SET_SOURCE = """([i, src]) => {
  window.jupyterapp.shell.currentWidget.content.widgets[i].model.sharedModel.setSource(src);
}"""


def long_reply(_body: dict[str, Any]) -> Reply:
    return Reply(Text("word " * 2_000, pieces=2_000, delay=0.01))


class _Factory:
    """What `tests/browser/lab.py`'s `lab` fixture needs from pytest's `tmp_path_factory`."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="agentcell-bench-lab-"))

    def mktemp(self, name: str) -> Path:
        path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.root))
        return path


def metrics(cdp: Any) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


METRIC_KEYS = ("ScriptDuration", "TaskDuration", "LayoutDuration", "RecalcStyleDuration", "JSHeapUsedSize")


def delta(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in METRIC_KEYS}


def stop_clicks(page: Any, server: FakeOpenAI, index: int, reps: int) -> list[dict[str, float]]:
    out = []
    for rep in range(reps + 1):  # the first one warms up (imports, first request)
        before = len(server.chat_requests)
        labmod.run_cell(page, index)
        widget = labmod.cell(page, index).locator(".agentcell")
        labmod.sync_api.expect(widget).to_have_attribute("data-status", "running", timeout=60_000)
        # Query afresh on every poll: the view may re-render (snapshot) and replace the answer element.
        page.wait_for_function(
            "(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];"
            " const a = c && c.querySelector('.agentcell[data-status=\"running\"] .agentcell-answer');"
            " return !!a && a.textContent.trim().split(/\\s+/).length >= 8; }", arg=index, timeout=60_000)
        deadline = time.monotonic() + 10
        while len(server.chat_requests) <= before and time.monotonic() < deadline:
            time.sleep(0.01)
        request = server.chat_requests[-1]
        stop = widget.locator(".agentcell-stop")
        stop.scroll_into_view_if_needed()
        page.wait_for_timeout(100)
        box = stop.bounding_box()
        assert box is not None
        clicked = time.monotonic()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        returned = time.monotonic()
        deadline = time.monotonic() + 15
        while request.disconnected_at is None and time.monotonic() < deadline:
            time.sleep(0.002)
        labmod.sync_api.expect(widget).to_have_attribute("data-status", "stopped", timeout=15_000)
        shown = time.monotonic()
        if request.disconnected_at is None:
            raise RuntimeError(f"no disconnect seen by the server (outcome {request.outcome})")
        if rep > 0:
            out.append({"click_to_disconnect_ms": (request.disconnected_at - clicked) * 1000,
                        "click_call_ms": (returned - clicked) * 1000,
                        "click_to_stopped_shown_ms_upper_bound": (shown - clicked) * 1000})
    return out


WS_COUNTER = """(() => {
  // Count the kernel messages the page receives, by type and second (comm traffic with the view open).
  const Orig = window.WebSocket;
  const dec = new TextDecoder();
  window.__ws = [];
  window.WebSocket = class extends Orig {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => {
        const head = typeof e.data === "string" ? e.data.slice(0, 600)
          : dec.decode(new Uint8Array(e.data, 0, Math.min(600, e.data.byteLength || 0)));
        const m = /"msg_type"\\s*:\\s*"(\\w+)"/.exec(head);
        window.__ws.push([performance.now(), m ? m[1] : "?"]);
      });
    }
  };
})();"""


def _traffic(frames: list[list[Any]], start: float, end: float, kind: str) -> dict[str, Any]:
    times = [t for t, k in frames if k == kind and start <= t <= end]
    per_second: dict[int, int] = {}
    for t in times:
        per_second[int((t - start) // 1000)] = per_second.get(int((t - start) // 1000), 0) + 1
    seconds = max((end - start) / 1000, 1e-9)
    return {"messages": len(times), "per_s": round(len(times) / seconds, 1),
            "busiest_second": max(per_second.values(), default=0)}


def observe(page: Any, cdp: Any, start: Any, wait_done: Any, *, kind: str) -> dict[str, Any]:
    """Run `start()`, wait with `wait_done()`, then 3 s more; long tasks split at the end of the run."""
    page.evaluate(OBSERVE)
    m1 = metrics(cdp)
    t0 = page.evaluate("() => performance.now()")
    started = time.monotonic()
    start()
    wait_done()
    wall = time.monotonic() - started
    t_done = page.evaluate("() => performance.now()")
    page.wait_for_timeout(3000)  # what lands after the end: the `final` trait, the static twin
    busy = delta(m1, metrics(cdp))
    bench = page.evaluate("() => ({ longtasks: window.__bench.longtasks, completedAt: window.__bench.completedAt,"
                          " frames: window.__bench.frames })")
    end_at = bench["completedAt"] or t_done
    during = [t["duration"] for t in bench["longtasks"] if t["start"] + t["duration"] < end_at]
    at_end = [t["duration"] for t in bench["longtasks"] if t["start"] + t["duration"] >= end_at]
    frames = page.evaluate("() => window.__ws")
    every = sorted(during + at_end, reverse=True)
    # JupyterLab's own part of "during": what ended before the kernel's first output message (the widget's
    # `comm_open`, the print's `stream`): running the cell, before anything of ours (or of the print) exists.
    first_output = min((t for t, k in frames if t >= t0 and k == ("comm_open" if kind == "comm_msg" else kind)),
                       default=end_at)
    before = [t["duration"] for t in bench["longtasks"] if t["start"] + t["duration"] < first_output]
    return {
        "wall_s": round(wall, 2),
        "long_tasks_over_50ms_during": sum(1 for d in during if d > GOAL_LONG_TASK_MS),
        "long_tasks_over_50ms_at_end": sum(1 for d in at_end if d > GOAL_LONG_TASK_MS),
        "long_tasks_over_50ms_before_output": sum(1 for d in before if d > GOAL_LONG_TASK_MS),
        "first_output_at_s": round((first_output - t0) / 1000, 2),
        "longest_task_ms": round(every[0], 1) if every else 0.0,
        "long_task_total_ms": round(sum(every), 1),
        "long_tasks_during_ms": [round(d, 1) for d in during],
        "long_tasks_at_end_ms": [round(d, 1) for d in at_end],
        "end_seen_at_s": round((end_at - t0) / 1000, 2),
        "traffic": _traffic(frames, t0, end_at, kind),
        "script_s": round(busy["ScriptDuration"], 3),
        "task_s": round(busy["TaskDuration"], 3),
        "layout_s": round(busy["LayoutDuration"], 3),
        "style_s": round(busy["RecalcStyleDuration"], 3),
        "heap_growth_mb": round(busy["JSHeapUsedSize"] / 1e6, 1),
        "main_thread_busy_fraction": round(busy["TaskDuration"] / (wall + 3.0), 3),
        "long_frames": _long_frames(bench["frames"], end_at, t0),
    }


def _long_frames(frames: list[dict[str, Any]], end_at: float, t0: float) -> list[str]:
    """Each animation frame with a task over the goal: when (s after the cell was run), how long, rendering,
    and the scripts it ran."""
    out = []
    for f in frames:
        if f["blocking"] <= 0 and f["duration"] - f["render"] <= GOAL_LONG_TASK_MS:
            continue
        when = "end" if f["start"] + f["duration"] >= end_at else "during"
        scripts = "; ".join(f"{x['invoker'][:60]} {x['fn']} [{x.get('url', '')[-24:]}] {x['ms']} ms "
                            f"(forced layout {x['forced_layout_ms']})"
                            for x in f["scripts"] if x["ms"] >= 2)
        out.append(f"{when} at {(f['start'] - t0) / 1000:.2f} s, {f['duration']:.0f} ms (render {f['render']:.0f}): "
                   f"{scripts or 'no script'}")
    return out


def idle_baseline(page: Any, cdp: Any, seconds: float = 8.0) -> dict[str, Any]:
    page.evaluate(OBSERVE)
    m0 = metrics(cdp)
    time.sleep(seconds)
    idle = delta(m0, metrics(cdp))
    return {"seconds": seconds, "task_s_per_s": round(idle["TaskDuration"] / seconds, 4),
            "long_tasks": len(page.evaluate("() => window.__bench.longtasks"))}


CELL_DONE = ("/\\[\\d+\\]:/.test(document.querySelectorAll('.jp-Notebook .jp-Cell')[arg]"
             ".querySelector('.jp-InputPrompt').textContent)")


def wait_in_page(page: Any, condition: str, arg: Any, timeout_s: float) -> None:
    """Wait for `condition` with a cheap check every 100 ms (Playwright's `expect` polling runs its own
    visibility and ARIA code in the page, which would show up in the long tasks being measured)."""
    page.wait_for_function(f"(arg) => {condition}", arg=arg, polling=100, timeout=timeout_s * 1000)


TRACE_CATEGORIES = "devtools.timeline,disabled-by-default-devtools.timeline,v8.execute,blink.user_timing"


def read_trace(cdp: Any) -> list[dict[str, Any]]:
    """End a CDP trace started with Tracing.start and return its events."""
    done: list[str] = []
    cdp.on("Tracing.tracingComplete", lambda params: done.append(params["stream"]))
    cdp.send("Tracing.end")
    deadline = time.monotonic() + 60
    while not done and time.monotonic() < deadline:
        cdp.send("Runtime.evaluate", {"expression": "1"})  # lets Playwright dispatch the event
        time.sleep(0.05)
    chunks = []
    while True:
        part = cdp.send("IO.read", {"handle": done[0], "size": 1 << 20})
        chunks.append(part["data"])
        if part.get("eof"):
            break
    cdp.send("IO.close", {"handle": done[0]})
    data = json.loads("".join(chunks))
    events: list[dict[str, Any]] = data["traceEvents"] if isinstance(data, dict) else data
    return events


def main_thread_spans(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The complete ("X") trace events of the page's main thread."""
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e.get("args", {}).get("name") == "CrRendererMain"}
    return [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in main]


def long_task_anatomy(events: list[dict[str, Any]], threshold_ms: float = GOAL_LONG_TASK_MS) -> list[dict[str, Any]]:
    """For each main-thread task over the threshold: where its time went (trace event names, and the
    script functions it called), summed over nested events (`--trace`)."""
    spans = main_thread_spans(events)
    tasks = [e for e in spans if e["name"] == "RunTask" and e.get("dur", 0) > threshold_ms * 1000]
    out = []
    for task in tasks:
        start, end = task["ts"], task["ts"] + task["dur"]
        inside = [e for e in spans if start <= e["ts"] < end and e is not task and e["pid"] == task["pid"]
                  and e["tid"] == task["tid"]]
        names: dict[str, float] = {}
        styled = 0  # elements whose style was recalculated (UpdateLayoutTree's elementCount)
        for e in inside:
            styled += int((e.get("args") or {}).get("elementCount") or 0) if e["name"] == "UpdateLayoutTree" else 0
            data = e.get("args", {}).get("data", {}) or {}
            label = e["name"]
            if e["name"] in ("FunctionCall", "TimerFire", "FireAnimationFrame", "EventDispatch"):
                label += f" {data.get('functionName') or data.get('type') or ''} {str(data.get('url', ''))[-40:]}"
            names[label] = names.get(label, 0.0) + e.get("dur", 0) / 1000
        top = sorted(names.items(), key=lambda kv: -kv[1])[:8]
        out.append({"ts_ms": round(start / 1000, 1), "ms": round(task["dur"] / 1000, 1), "styled_elements": styled,
                    "inside": [f"{ms:.1f} ms {label.strip()}" for label, ms in top]})
    return out


def samples_in(profile: dict[str, Any], start_us: float, end_us: float) -> list[str]:
    """The heaviest call paths (outermost named frames first, 6 deep) among the CPU-profile samples taken
    between two trace timestamps (`--trace --profile`)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    parent = {child: node["id"] for node in profile["nodes"] for child in node.get("children", [])}
    counts: dict[str, int] = {}
    t = profile["startTime"]
    for sample, dt in zip(profile.get("samples", []), profile.get("timeDeltas", []), strict=False):
        t += dt
        if not start_us <= t < end_us:
            continue
        path = []
        node_id: int | None = sample
        while node_id is not None:
            frame = nodes[node_id]["callFrame"]
            if frame["functionName"] and not frame["functionName"].startswith("("):
                path.append(f"{frame['functionName']}@{frame['url'].rsplit('/', 1)[-1][:12]}:{frame['lineNumber'] + 1}")
            node_id = parent.get(node_id)
        key = " < ".join(path[:6]) or "(native)"
        counts[key] = counts.get(key, 0) + 1
    return [f"{n} × {key}" for key, n in sorted(counts.items(), key=lambda kv: -kv[1])[:6]]


def top_functions(profile: dict[str, Any], n: int = 30) -> list[str]:
    """Self time per function of a CDP CPU profile, largest first (`--profile`; build the bundle unminified)."""
    nodes = {node["id"]: node for node in profile["nodes"]}
    deltas = profile.get("timeDeltas", [])
    self_us: dict[str, float] = {}
    for sample, dt in zip(profile.get("samples", []), deltas, strict=False):
        frame = nodes[sample]["callFrame"]
        where = f"{frame['url'].rsplit('/', 1)[-1][:40]}:{frame['lineNumber'] + 1}"
        key = f"{frame['functionName'] or '(anonymous)'} {where}"
        self_us[key] = self_us.get(key, 0.0) + dt
    ranked = sorted(self_us.items(), key=lambda kv: -kv[1])[:n]
    return [f"{us / 1000:9.1f} ms  {key}" for key, us in ranked]


def stream_cost(page: Any, index: int, tokens: int, *, profile: bool = False, trace: bool = False,
                anatomy_ms: float = GOAL_LONG_TASK_MS) -> dict[str, Any]:
    """The widget streaming `tokens` of Markdown (cell `index`), then the plain-print baselines (cell `index + 1`)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    out: dict[str, Any] = {"idle": idle_baseline(page, cdp)}
    widget = labmod.cell(page, index).locator(".agentcell")
    if trace:
        cdp.send("Tracing.start", {"categories": TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})
    if profile:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
        cdp.send("Profiler.start")
    out["widget"] = observe(
        page, cdp, lambda: labmod.run_cell(page, index),
        lambda: wait_in_page(page, "window.__bench.completedAt !== null", None, 600), kind="comm_msg")
    cpu = cdp.send("Profiler.stop")["profile"] if profile else None
    if cpu is not None:
        out["widget"]["profile_top"] = top_functions(cpu)
    if trace:
        out["widget"]["long_task_anatomy"] = anatomy = long_task_anatomy(read_trace(cdp), anatomy_ms)
        for task in anatomy if cpu is not None else []:
            task["samples"] = samples_in(cpu, task["ts_ms"] * 1000, (task["ts_ms"] + task["ms"]) * 1000)
    handle = widget.element_handle()
    out["widget"]["answer_chars_shown"] = page.evaluate(
        "(el) => el.querySelector('.agentcell-answer[data-slot=\"answer\"]')?.textContent.length ?? 0", handle)
    out["widget"]["code_blocks_rendered"] = page.evaluate("(el) => el.querySelectorAll('pre code').length", handle)
    out["widget"]["chunks"] = page.evaluate("(el) => el.querySelectorAll('.agentcell-md-chunk').length", handle)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    for name, seconds in (("print_unpaced", 0.0), ("print_paced", out["widget"]["wall_s"])):
        page.evaluate(SET_SOURCE, [index + 1, PRINT_CELL.format(tokens=tokens, seconds=seconds)])
        out[name] = observe(page, cdp, lambda: labmod.run_cell(page, index + 1),
                            lambda: wait_in_page(page, CELL_DONE, index + 1, 600), kind="stream")
        out[name]["chars_shown"] = page.evaluate(
            "(i) => document.querySelectorAll('.jp-Notebook .jp-Cell')[i].querySelector('.jp-OutputArea')"
            "?.textContent.length ?? 0", index + 1)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    return out


def stop_figures(stops: list[dict[str, float]]) -> dict[str, Any]:
    disc = [s["click_to_disconnect_ms"] for s in stops]
    shown = [s["click_to_stopped_shown_ms_upper_bound"] for s in stops]
    return {
        "stops": len(stops),
        "disconnect_p50_ms": round(_common.percentile(disc, 50), 1),
        "disconnect_p95_ms": round(_common.percentile(disc, 95), 1),
        "disconnect_max_ms": round(max(disc), 1),
        "click_call_p50_ms": round(_common.median(s["click_call_ms"] for s in stops), 1),
        "stopped_shown_p50_ms_upper_bound": round(_common.percentile(shown, 50), 1),
        "samples": stops,
    }


@contextlib.contextmanager
def lab_page(name: str, cells: list[str], *, timeout_ms: int, init_script: str | None = None) -> Iterator[Any]:
    """A JupyterLab server (`tests/browser/lab.py`'s) with notebook `name` of `cells` open in Chromium: the page.
    Closed, its kernels shut down, and the server stopped on the way out."""
    factory = _Factory()
    lab_gen = labmod.lab.__wrapped__(factory)  # type: ignore[attr-defined]  # the fixture's generator
    lab = next(lab_gen)
    try:
        lab.write_notebook(name, cells)
        with labmod.sync_api.sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                str(factory.mktemp("profile")), executable_path=labmod.CHROMIUM, headless=True, args=labmod.ARGS,
                viewport={"width": 1200, "height": 900})
            if init_script is not None:
                ctx.add_init_script(init_script)
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.set_default_timeout(timeout_ms)
            try:
                labmod.open_notebook(page, lab, name)
                yield page
            finally:
                ctx.close()
                lab.delete_sessions()
    finally:
        with contextlib.suppress(StopIteration):
            next(lab_gen)


def run_all(args: argparse.Namespace, machine: Any, payload: dict[str, Any]) -> None:
    server = FakeOpenAI(default=long_reply).start()
    if server._loop is not None:  # a client reset leaves the server's "gone" read with an unread exception
        server._loop.set_exception_handler(lambda _loop, _ctx: None)
    cells = ["%load_ext agentcell", SETUP.format(base_url=server.base_url, tokens=args.tokens), STOP_CELL,
             STREAM_CELL, "# the plain-print baseline goes here"]
    try:
        with lab_page("bench.ipynb", cells, timeout_ms=60_000, init_script=WS_COUNTER) as page:
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            console: list[str] = []
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text[:300]}")
                    if msg.type in ("error", "warning") else None)
            for i in (0, 1):
                labmod.run_cell(page, i)
                labmod.wait_cell_done(page, i)
            machine.sample()
            if args.only in ("all", "stop"):
                payload["stop_click"] = stop_figures(stop_clicks(page, server, 2, args.stops))
                machine.sample()
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            if args.only in ("all", "stream"):
                cost = stream_cost(page, 3, args.tokens, profile=args.profile, trace=args.trace,
                                   anatomy_ms=args.anatomy_ms)
                payload["stream_cost"] = {"tokens": args.tokens, **cost}
                machine.sample()
            payload["page_errors"] = errors
            payload["console_warnings"] = console
    finally:
        server.close()


def report(payload: dict[str, Any]) -> None:
    if "stop_click" in payload:
        sc = payload["stop_click"]
        print(f"Stop click → server disconnect over {sc['stops']} stops: p50 {sc['disconnect_p50_ms']} ms, "
              f"p95 {sc['disconnect_p95_ms']} ms, max {sc['disconnect_max_ms']} ms "
              f"(the click call itself: p50 {sc['click_call_p50_ms']} ms)")
    if "stream_cost" in payload:
        cost = payload["stream_cost"]
        keys = [k for k, v in cost["widget"].items() if not isinstance(v, dict | list)]
        rows = [[k, *(cost[n].get(k, "") for n in ("widget", "print_unpaced", "print_paced"))] for k in keys]
        rows += [[f"traffic {k}", *(cost[n]["traffic"][k] for n in ("widget", "print_unpaced", "print_paced"))]
                 for k in ("messages", "per_s", "busiest_second")]
        print(_common.table(rows, [f"{cost['tokens']} tokens", "widget", "print (unpaced)", "print (paced)"]))
        for n in ("widget", "print_unpaced", "print_paced"):
            during, at_end = cost[n]["long_tasks_during_ms"], cost[n]["long_tasks_at_end_ms"]
            print(f"{n}: long tasks during {during}, at the end {at_end}")
        for line in cost["widget"].get("long_frames", []):
            print(f"    long frame, widget run: {line}")
        print(f"idle baseline: {cost['idle']}")
        print("\n".join(cost["widget"].get("profile_top", [])))
        for task in cost["widget"].get("long_task_anatomy", []):
            print(f"long task {task['ms']} ms ({task.get('styled_elements', 0)} elements restyled): "
                  + "; ".join(task["inside"]))
            for line in task.get("samples", []):
                print(f"    {line}")
    for line in payload.get("console_warnings", [])[:20]:
        print(f"console {line}")
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=50_000)
    parser.add_argument("--only", choices=("all", "stop", "stream"), default="all")
    parser.add_argument("--out", default="browser", help="results file name under bench/results/")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", action="store_true", help="CPU profile of the widget run (top functions)")
    parser.add_argument("--trace", action="store_true", help="Chrome trace of the widget run: what each long task did")
    parser.add_argument("--anatomy-ms", type=float, default=GOAL_LONG_TASK_MS,
                        help="with --trace: dissect every task longer than this (the trace slows tasks down)")
    args = parser.parse_args()
    if args.quick:
        args.stops, args.tokens = 2, 5_000
    machine = _common.Machine()
    payload: dict[str, Any] = {"benchmark": "browser", "command": " ".join(["python", *sys.argv]),
                               "goal_long_task_ms": GOAL_LONG_TASK_MS}
    run_all(args, machine, payload)
    payload["machine"] = machine.facts()
    path = _common.write_results(args.out, payload)
    report(payload)
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
