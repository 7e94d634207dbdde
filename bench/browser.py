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
   collects `longtask` entries and CDP `Performance.getMetrics` gives script, layout, style and task
   durations. Baseline: the same page idle for the same wall time (what JupyterLab itself costs).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
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
"""

STOP_CELL = "%%agent -m bench_model\nTell me a very long story about a lighthouse keeper.\n[[answer]]"
STREAM_CELL = "%%agent -m long_md_model --max-tokens 1000000\nWrite the long guide.\n[[answer]]"

OBSERVE = """() => {
  if (window.__bench && window.__bench.obs) window.__bench.obs.disconnect();
  window.__bench = { longtasks: [] };
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.longtasks.push({ start: e.startTime, duration: e.duration });
  });
  obs.observe({ type: "longtask", buffered: false });
  window.__bench.obs = obs;
  window.__bench.t0 = performance.now();
  return true;
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


def stream_cost(page: Any, index: int) -> dict[str, Any]:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable", {"timeDomain": "threadTicks"})
    # Baseline: the page idle for a while (JupyterLab's own background work).
    page.evaluate(OBSERVE)
    m0 = metrics(cdp)
    idle_s = 8.0
    time.sleep(idle_s)
    idle = delta(m0, metrics(cdp))
    idle_long = page.evaluate("() => window.__bench.longtasks")
    # The stream.
    page.evaluate(OBSERVE)
    m1 = metrics(cdp)
    started = time.monotonic()
    t0 = page.evaluate("() => performance.now()")
    labmod.run_cell(page, index)
    widget = labmod.cell(page, index).locator(".agentcell")
    labmod.sync_api.expect(widget).to_have_attribute("data-status", "completed", timeout=300_000)
    ended_status = time.monotonic()
    t_end = page.evaluate("() => performance.now()")
    page.wait_for_timeout(1500)  # the static transcript and final trait land after the status
    m2 = metrics(cdp)
    wall = time.monotonic() - started
    busy = delta(m1, m2)
    long_tasks = page.evaluate("() => window.__bench.longtasks")
    chars = page.evaluate(
        "(el) => el.querySelector('.agentcell-answer[data-slot=\"answer\"]')?.textContent.length ?? 0",
        widget.element_handle())
    code_blocks = page.evaluate("(el) => el.querySelectorAll('pre code, pre').length", widget.element_handle())
    durations = sorted((t["duration"] for t in long_tasks), reverse=True)
    per_s = {k: busy[k] / wall for k in METRIC_KEYS if k != "JSHeapUsedSize"}
    idle_per_s = {k: idle[k] / idle_s for k in METRIC_KEYS if k != "JSHeapUsedSize"}
    return {
        "stream_wall_s": round(ended_status - started, 2),
        "measured_wall_s": round(wall, 2),
        "answer_chars_shown": chars,
        "code_blocks_rendered": code_blocks,
        "long_tasks": len(long_tasks),
        "long_tasks_over_50ms": sum(1 for d in durations if d > GOAL_LONG_TASK_MS),
        "longest_task_ms": round(durations[0], 1) if durations else 0.0,
        "long_task_total_ms": round(sum(durations), 1),
        "long_tasks_after_status_ms": [round(t["duration"], 1) for t in long_tasks if t["start"] >= t_end],
        "status_completed_seen_at_s": round((t_end - t0) / 1000, 2),
        "long_tasks_detail": [{"start_s": round((t["start"] - t0) / 1000, 2), "ms": round(t["duration"], 1)}
                              for t in long_tasks],
        "script_s": round(busy["ScriptDuration"], 3),
        "task_s": round(busy["TaskDuration"], 3),
        "layout_s": round(busy["LayoutDuration"], 3),
        "style_s": round(busy["RecalcStyleDuration"], 3),
        "heap_growth_mb": round(busy["JSHeapUsedSize"] / 1e6, 1),
        "main_thread_busy_fraction": round(per_s["TaskDuration"], 3),
        "idle_baseline": {"seconds": idle_s, "script_s_per_s": round(idle_per_s["ScriptDuration"], 4),
                          "task_s_per_s": round(idle_per_s["TaskDuration"], 4), "long_tasks": len(idle_long)},
        "script_per_s_vs_idle": round(per_s["ScriptDuration"] / max(idle_per_s["ScriptDuration"], 1e-6), 1),
        "task_per_s_vs_idle": round(per_s["TaskDuration"] / max(idle_per_s["TaskDuration"], 1e-6), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--tokens", type=int, default=50_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.stops, args.tokens = 2, 5_000
    machine = _common.Machine()
    server = FakeOpenAI(default=long_reply).start()
    if server._loop is not None:  # a client reset leaves the server's "gone" read with an unread exception
        server._loop.set_exception_handler(lambda _loop, _ctx: None)
    factory = _Factory()
    lab_gen = labmod.lab.__wrapped__(factory)  # type: ignore[attr-defined]  # the fixture's generator
    lab = next(lab_gen)
    payload: dict[str, Any] = {"benchmark": "browser", "command": " ".join(["python", *sys.argv]),
                               "goal_long_task_ms": GOAL_LONG_TASK_MS}
    try:
        lab.write_notebook("bench.ipynb", [
            "%load_ext agentcell",
            SETUP.format(base_url=server.base_url, tokens=args.tokens),
            STOP_CELL,
            STREAM_CELL,
        ])
        with labmod.sync_api.sync_playwright() as p:
            ctx = p.chromium.launch_persistent_context(
                str(factory.mktemp("profile")), executable_path=labmod.CHROMIUM, headless=True, args=labmod.ARGS,
                viewport={"width": 1200, "height": 900})
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            try:
                labmod.open_notebook(page, lab, "bench.ipynb")
                for i in (0, 1):
                    labmod.run_cell(page, i)
                    labmod.wait_cell_done(page, i)
                machine.sample()
                stops = stop_clicks(page, server, 2, args.stops)
                machine.sample()
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
                cost = stream_cost(page, 3)
                machine.sample()
                payload["page_errors"] = errors
            finally:
                ctx.close()
                lab.delete_sessions()
    finally:
        with contextlib.suppress(StopIteration):
            next(lab_gen)
        server.close()
    disc = [s["click_to_disconnect_ms"] for s in stops]
    shown = [s["click_to_stopped_shown_ms_upper_bound"] for s in stops]
    payload["stop_click"] = {
        "stops": len(stops),
        "disconnect_p50_ms": round(_common.percentile(disc, 50), 1),
        "disconnect_p95_ms": round(_common.percentile(disc, 95), 1),
        "disconnect_max_ms": round(max(disc), 1),
        "click_call_p50_ms": round(_common.median(s["click_call_ms"] for s in stops), 1),
        "stopped_shown_p50_ms_upper_bound": round(_common.percentile(shown, 50), 1),
        "samples": stops,
    }
    payload["stream_cost"] = {"tokens": args.tokens, **cost}
    payload["machine"] = machine.facts()
    path = _common.write_results("browser", payload)
    sc = payload["stop_click"]
    print(f"Stop click → server disconnect over {sc['stops']} stops: p50 {sc['disconnect_p50_ms']} ms, "
          f"p95 {sc['disconnect_p95_ms']} ms, max {sc['disconnect_max_ms']} ms "
          f"(the click call itself: p50 {sc['click_call_p50_ms']} ms)")
    print(_common.table([[k, v] for k, v in cost.items() if not isinstance(v, dict | list)], ["stream cost", "value"]))
    print(f"idle baseline: {cost['idle_baseline']}")
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
