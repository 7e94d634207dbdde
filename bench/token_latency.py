"""Tokens painted as they arrive: server send → the token in the page's DOM, the widget next to a plain `print` cell.

Run: `python bench/token_latency.py` (about 5 minutes; `--quick` for a smoke run). Writes
`bench/results/token_latency.json` and prints a table. JupyterLab + Debian's Chromium through
`bench/browser.py`'s `lab_page` (never `playwright install`).

A scripted OpenAI-compatible server (`tests/openai_server.py`) in this process streams the same reply
to both variants: a pause (the model's time to first token), then `--tokens` words `w000 `, `w001 `, …
`--gap-ms` apart, one SSE chunk each. The server stamps the wall-clock time each chunk is written
(`time.time()`). The two variants, interleaved in a shuffled order every repetition:

* **widget**: `%%agent -m bench_model` (pydantic-ai's `OpenAIChatModel` pointed at the server);
* **print**: a plain cell that reads the same stream with httpx and `print(token, end="", flush=True)`s
  each content delta (JupyterLab's own path for text, the baseline).

In the page a `MutationObserver` on the cell reads the highest `wNNN` shown after each mutation and
stamps `performance.timeOrigin + performance.now()` for every newly shown token (the DOM time), and the
start of the frame that shows it (painted): the frame whose animation callbacks made the change (the
widget's view renders in `requestAnimationFrame`), else the next frame (the print cell's text is put in
by a message task). Both are painted at the end of that frame, so the same frame start stands for both.
The page's and the server's clocks are the same wall clock; their offset is measured each repetition (a
round trip around `performance.now()`, ± half of it).

Figures: the first token's send → painted, as a ratio widget / print per repetition (median of the
paired ratios; goal ≤ ×1.25), and the median (p90) send → DOM of the tokens after the first (goal
≤ 20 ms; their send → painted median beside it). The comm-message rate of a 5,000-token/s stream is
`bench/widget_traffic.py`'s.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

import browser
from tests.browser import lab as labmod
from tests.openai_server import FakeOpenAI, Pause, Reply, Text

GOAL_FIRST_RATIO = 1.25
GOAL_MID_MS = 20.0
TOKEN = re.compile(rb'"content":\s*"w(\d+) "')

SETUP = """
import json, httpx
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

BASE = {base_url!r}
{intervals}
bench_model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=BASE, api_key="bench"))

async def print_stream():
    body = {{"model": "fake-model", "stream": True, "messages": [{{"role": "user", "content": "Go"}}]}}
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", BASE + "/chat/completions", json=body,
                                 headers={{"Authorization": "Bearer bench"}}) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    choices = json.loads(line[6:]).get("choices") or [{{}}]
                    text = (choices[0].get("delta") or {{}}).get("content")
                    if text:
                        print(text, end="", flush=True)
"""

WIDGET_CELL = "%%agent -m bench_model\nSay the words.\n[[answer]]"
PRINT_CELL = "await print_stream()"

WATCH = """(i) => {
  if (window.__lat && window.__lat.mo) window.__lat.mo.disconnect();
  if (window.__lat) window.__lat.stopped = true;
  const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];
  const lat = window.__lat = { seen: -1, at: {}, frame: {}, waiting: [], inFrame: false, mo: null, stopped: false };
  const origin = performance.timeOrigin;
  // The frame that shows a token: the frame whose animation callbacks made the change (a view that renders
  // in requestAnimationFrame), else the next one (text put in by a message task, as the print cell's is).
  // Each is taken at the frame's start time, the same for both variants.
  const loop = (ts) => {
    if (lat.stopped) return;
    for (const k of lat.waiting) lat.frame[k] = origin + ts;
    lat.waiting = [];
    lat.inFrame = true;
    lat.ts = ts;
    setTimeout(() => { lat.inFrame = false; }, 0);
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  const look = () => {
    const words = (cell.querySelector('.jp-Cell-outputWrapper')?.textContent || '').match(/w\\d{3}/g);
    if (!words) return;
    let top = lat.seen;
    for (const w of words) top = Math.max(top, Number(w.slice(1)));
    if (top <= lat.seen) return;
    const t = origin + performance.now();
    for (let k = lat.seen + 1; k <= top; k++) {
      lat.at[k] = t;
      if (lat.inFrame) lat.frame[k] = origin + lat.ts; else lat.waiting.push(k);
    }
    lat.seen = top;
  };
  lat.mo = new MutationObserver(look);
  lat.mo.observe(cell, { subtree: true, childList: true, characterData: true });
  return true;
}"""


class TimedServer(FakeOpenAI):
    """The fixture server, stamping the wall-clock time each token's chunk is written."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent: dict[int, float] = {}

    async def _stream(self, reader: Any, writer: Any, rec: Any, reply: Reply) -> None:
        sent = self.sent

        class Stamping:
            def __getattr__(self, name: str) -> Any:
                return getattr(writer, name)

            def write(self, data: bytes) -> None:
                writer.write(data)
                match = TOKEN.search(data)
                if match is not None:
                    sent[int(match.group(1))] = time.time() * 1000

        await super()._stream(reader, Stamping(), rec, reply)


def reply_of(tokens: int, gap_s: float, first_s: float) -> Reply:
    steps: list[Any] = [Pause(first_s)]
    for i in range(tokens):
        steps.append(Text(f"w{i:03d} "))
        if i < tokens - 1:
            steps.append(Pause(gap_s))
    return Reply(*steps)


def clock_offset(page: Any) -> tuple[float, float]:
    """(page clock − server clock in ms, its uncertainty): the smallest of a few round trips."""
    best = (0.0, float("inf"))
    for _ in range(5):
        before = time.time() * 1000
        page_ms = page.evaluate("() => performance.timeOrigin + performance.now()")
        after = time.time() * 1000
        half = (after - before) / 2
        if half < best[1]:
            best = (page_ms - (before + half), half)
    return best


def one_run(page: Any, server: TimedServer, index: int, tokens: int) -> dict[str, Any]:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    offset, plus_minus = clock_offset(page)
    server.sent = {}
    page.evaluate(WATCH, index)
    labmod.run_cell(page, index)
    page.wait_for_function(f"() => window.__lat.seen >= {tokens - 1} && window.__lat.waiting.length === 0",
                           timeout=60_000)
    labmod.wait_cell_done(page, index)
    shown = page.evaluate("() => ({ at: window.__lat.at, frame: window.__lat.frame })")
    sent = dict(server.sent)
    if len(sent) != tokens:
        raise RuntimeError(f"the server stamped {len(sent)} of {tokens} tokens")
    dom = {int(k): v - offset for k, v in shown["at"].items()}
    frame = {int(k): v - offset for k, v in shown["frame"].items()}
    lags = [dom[i] - sent[i] for i in range(tokens)]
    frames = [frame[i] - sent[i] for i in range(tokens)]
    return {"first_dom_ms": lags[0], "first_painted_ms": frames[0], "mid_ms": lags[1:], "mid_frame_ms": frames[1:],
            "clock_pm_ms": plus_minus}


def run_all(args: argparse.Namespace, machine: _common.Machine, payload: dict[str, Any]) -> None:
    server = TimedServer(default=lambda _body: reply_of(args.tokens, args.gap_ms / 1000, args.first_ms / 1000))
    server.start()
    intervals = ""
    if args.widget_interval_ms is not None:  # a diagnostic: what the batching costs, against none
        intervals += ("from agentcell.frontends.widget import widget as _w\n"
                      f"_w.AgentWidget.__init__.__kwdefaults__['flush_interval'] = {args.widget_interval_ms / 1000}\n")
    if args.coalesce_ms is not None:
        intervals += f"from agentcell.engine import coalesce as _c\n_c.INTERVAL = {args.coalesce_ms / 1000}\n"
    cells = ["%load_ext agentcell", SETUP.format(base_url=server.base_url, intervals=intervals), WIDGET_CELL,
             PRINT_CELL]
    try:
        with browser.lab_page("latency.ipynb", cells, timeout_ms=60_000) as page:
            for i in (0, 1):
                labmod.run_cell(page, i)
                labmod.wait_cell_done(page, i)
            machine.sample()
            samples = _common.interleaved(
                {"widget": lambda: one_run(page, server, 2, args.tokens),
                 "print": lambda: one_run(page, server, 3, args.tokens)},
                reps=args.reps, warmup=1, on_rep=lambda _rep: machine.sample())
    finally:
        server.close()
    payload["samples"] = samples
    payload["figures"] = figures(samples)


def figures(samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, runs in samples.items():
        mids = [lag for run in runs for lag in run["mid_ms"]]
        out[name] = {
            "first_painted_median_ms": round(_common.median(r["first_painted_ms"] for r in runs), 1),
            "first_dom_median_ms": round(_common.median(r["first_dom_ms"] for r in runs), 1),
            "mid_median_ms": round(_common.median(mids), 1),
            "mid_p90_ms": round(_common.percentile(mids, 90), 1),
            "mid_frame_median_ms": round(_common.median(lag for run in runs for lag in run["mid_frame_ms"]), 1),
            "clock_pm_max_ms": round(max(r["clock_pm_ms"] for r in runs), 2),
        }
    out["first_painted_ratio"] = round(_common.median(
        w["first_painted_ms"] / p["first_painted_ms"]
        for w, p in zip(samples["widget"], samples["print"], strict=True) if p["first_painted_ms"] > 0), 3)
    out["met_first"] = out["first_painted_ratio"] <= GOAL_FIRST_RATIO
    out["met_mid"] = out["widget"]["mid_median_ms"] <= GOAL_MID_MS
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=25)
    parser.add_argument("--tokens", type=int, default=40)
    parser.add_argument("--gap-ms", type=float, default=30.0, help="between two tokens (30 ms: ~33 tokens/s)")
    parser.add_argument("--first-ms", type=float, default=600.0, help="the model's time to its first token")
    parser.add_argument("--widget-interval-ms", type=float, default=None, help="diagnostic: the widget's interval")
    parser.add_argument("--coalesce-ms", type=float, default=None, help="diagnostic: the engine's interval")
    parser.add_argument("--src", default=None, help="the agentcell sources the kernel imports (another checkout's src)")
    parser.add_argument("--out", default="token_latency", help="results file name under bench/results/")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.tokens = 3, 15
    if args.src is not None:
        labmod.SRC = Path(args.src).resolve()
    machine = _common.Machine()
    payload: dict[str, Any] = {"benchmark": "token_latency", "src": str(labmod.SRC),
                               "command": " ".join(["python", *sys.argv]),
                               "tokens": args.tokens, "gap_ms": args.gap_ms, "first_ms": args.first_ms,
                               "widget_interval_ms": args.widget_interval_ms, "coalesce_ms": args.coalesce_ms,
                               "goal_first_ratio": GOAL_FIRST_RATIO, "goal_mid_ms": GOAL_MID_MS}
    run_all(args, machine, payload)
    payload["machine"] = machine.facts()
    path = _common.write_results(args.out, payload)
    fig = payload["figures"]
    rows = [[name, *(fig[name][k] for k in ("first_painted_median_ms", "first_dom_median_ms", "mid_median_ms",
                                            "mid_p90_ms", "mid_frame_median_ms"))] for name in ("widget", "print")]
    print(_common.table(rows, [f"{args.tokens} tokens, {args.gap_ms} ms apart", "first painted ms",
                               "first in DOM ms", "mid-stream median ms", "mid-stream p90 ms",
                               "mid-stream painted median ms"]))
    print(f"first token painted, widget / print: ×{fig['first_painted_ratio']} (goal ≤ ×{GOAL_FIRST_RATIO}: "
          f"{'met' if fig['met_first'] else 'not met'}); mid-stream median {fig['widget']['mid_median_ms']} ms "
          f"(goal ≤ {GOAL_MID_MS} ms: {'met' if fig['met_mid'] else 'not met'})")
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
