"""Widget traffic: comm messages, bytes and kernel CPU per 1,000 tokens at 50, 500 and 5,000 tokens/s.

Run: `.venv/bin/python bench/widget_traffic.py` (about 4-5 minutes; `--quick` for a smoke run;
`--naive-rates 50,500` leaves the naive widget out at 5,000 tokens/s, where a loaded machine cannot keep up
with its flood and the run times out).
Writes `bench/results/widget_traffic.json` and prints a table.

A real ipykernel (the dev venv's, through jupyter_client, `tests/kernelclient.py`) runs the same
rate-limited FunctionModel (`"t123 "` tokens, paced by the wall clock) three ways, interleaved:

* `quiet` — `%%agent -q`'s path: the run with no view (the floor: engine + model);
* `agentcell` — `handle.launch(...)` with the real `AgentWidget` (batched custom messages, ≤ 20/s);
* `naive` — a bench-only anywidget with a synced `text` trait re-sent in full on every delta (what
  a widget that "just syncs the answer" does).

The teaching view is a switch in the browser only: the kernel sends the teaching events (each request's
new messages, each response, the HTTP exchange) whether or not it is open, so `agentcell` here is the
traffic with the teaching view open. A last section checks that the bytes are linear in the text: the
same rate with 4x the tokens should cost the same bytes per token.

Measured from the client side: comm messages on iopub and their JSON bytes (`comm_msg` only; the
agentcell widget's end-of-run `final` trait is included, its static-transcript display update is
reported apart), the busiest 1-second window of messages, how many the kernel sent (a flooded iopub
drops messages past ZMQ's high-water mark), and the kernel's process CPU time
(`time.process_time()` inside the kernel, all threads: engine, widget, ZMQ/iopub). The journal is
off in the kernel (`AGENTCELL_JOURNAL=off`) so only the view differs between the variants.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from tests.kernelclient import KernelSession, Msg

SETUP = r'''
import asyncio, json, time
import anywidget, traitlets
from IPython.display import display
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits
from agentcell.engine import start_run
from agentcell.events import TokenDelta
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.options import RunOptions
from agentcell.template import compile_template

BENCH_T = compile_template("Go [[answer]]")
BENCH_L = UsageLimits(request_limit=5, tool_calls_limit=5, output_tokens_limit=10**9)

def bench_model(n, rate):
    """n tokens paced at `rate` tokens/s by the wall clock (at most ~250 wake-ups a second)."""
    chunk = max(1, rate // 250)
    async def fn(messages, info):
        loop = asyncio.get_running_loop()
        start = loop.time()
        for i in range(n):
            if i % chunk == 0:
                await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
            yield f"t{i} "
    return FunctionModel(stream_function=fn)

class NaiveWidget(anywidget.AnyWidget):
    """The naive design: the whole answer in one synced trait, re-sent on every delta."""
    _esm = ("export default { render({ model, el }) { const f = () => { el.textContent = model.get('text'); };"
            " f(); model.on('change:text', f); } }")
    text = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("idle").tag(sync=True)

async def bench_variant(kind, n, rate):
    model = bench_model(n, rate)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if kind == "naive":
        run = start_run(BENCH_T, model=model, limits=BENCH_L)
        view = NaiveWidget()
        display(view)
        view.status = "running"
        sent = 1
        async for event in run.events():
            if isinstance(event, TokenDelta):
                view.text = view.text + event.text
                sent += 1
        await run
        view.status = "completed"
        sent += 1
        shown = len(view.text)
    else:
        handle = launch(LaunchSpec(template=BENCH_T, options=RunOptions(model=model, limits=BENCH_L),
                                   quiet=(kind == "quiet")))
        if handle.widget is not None:
            handle.widget.show()
        result = await handle
        shown = len(result.answer)
        # custom messages + trait updates (status at start and end, final)
        sent = 0 if handle.widget is None else handle.widget.messages_sent + 3
    return json.dumps({"cpu": time.process_time() - cpu0, "wall": time.perf_counter() - wall0, "chars": shown,
                       "sent": sent})
'''


class Recorder:
    """Wraps the session's iopub handler: every message's type, comm id, JSON size and arrival time."""

    def __init__(self, session: KernelSession) -> None:
        self.session = session
        self.rows: list[tuple[float, str, str, int]] = []
        self._original = session._on_iopub
        session._on_iopub = self._spy  # type: ignore[method-assign]

    def _spy(self, msg: Msg) -> None:
        content = msg["content"]
        self.rows.append((time.monotonic(), msg["msg_type"], content.get("comm_id", ""),
                          len(json.dumps(content, default=str))))
        self._original(msg)

    def clear(self) -> None:
        self.rows = []


def run_variant(session: KernelSession, rec: Recorder, kind: str, tokens: int, rate: int) -> dict[str, float]:
    before = set(session.comms)
    rec.clear()
    session.run(f"_bench_out = await bench_variant({kind!r}, {tokens}, {rate})", timeout=600)
    session.pump(0.3)  # let trailing iopub messages arrive
    # Read the figures in a separate cell: a flooded iopub (the naive widget) may drop the run's own output.
    measured = json.loads(session.run("print(_bench_out)").strip().splitlines()[-1])
    new = set(session.comms) - before
    comm_rows = [r for r in rec.rows if r[1] == "comm_msg" and r[2] in new]
    times = [r[0] for r in comm_rows]
    peak = max((sum(1 for u in times if t <= u < t + 1.0) for t in times), default=0)
    per_k = 1000 / tokens
    return {
        "wall": measured["wall"],
        "cpu": measured["cpu"],
        "tokens_per_s_achieved": tokens / measured["wall"],
        "comm_msgs": len(comm_rows),
        "comm_bytes": sum(r[3] for r in comm_rows),
        "display_update_bytes": sum(r[3] for r in rec.rows if r[1] == "update_display_data"),
        "peak_msgs_per_s": peak,
        "kernel_sent_msgs": measured.get("sent", -1),
        "comm_msgs_per_1k_tokens": len(comm_rows) * per_k,
        "comm_bytes_per_1k_tokens": sum(r[3] for r in comm_rows) * per_k,
        "cpu_ms_per_1k_tokens": measured["cpu"] * 1000 * per_k,
    }


def summarise_rate(samples: dict[str, list[dict[str, float]]], *, tokens: int, reps: int) -> dict[str, Any]:
    """Medians per variant, CPU against the quiet run, and naive against agentcell where naive ran."""
    entry: dict[str, Any] = {"tokens": tokens, "reps": reps, "variants": {}}
    for kind, runs in samples.items():
        summary: dict[str, Any] = {key: round(_common.median(r[key] for r in runs), 3) for key in runs[0]}
        summary["cpu_ratio_vs_quiet"] = round(_common.paired_ratio(samples, kind, "quiet", "cpu"), 3)
        summary["samples"] = runs
        entry["variants"][kind] = summary
    a, q = entry["variants"]["agentcell"], entry["variants"]["quiet"]
    entry["view_cpu_ms_per_1k_tokens"] = {"agentcell": round(a["cpu_ms_per_1k_tokens"] - q["cpu_ms_per_1k_tokens"], 2)}
    if "naive" in samples:
        n = entry["variants"]["naive"]
        entry["naive_over_agentcell"] = {
            "comm_msgs": round(n["comm_msgs"] / max(a["comm_msgs"], 1), 2),
            "comm_bytes": round(n["comm_bytes"] / max(a["comm_bytes"], 1), 2),
            "cpu": round(_common.paired_ratio(samples, "naive", "agentcell", "cpu"), 3),
        }
        entry["view_cpu_ms_per_1k_tokens"]["naive"] = round(n["cpu_ms_per_1k_tokens"] - q["cpu_ms_per_1k_tokens"], 2)
    return entry


def linearity(session: KernelSession, rec: Recorder, *, rate: int, tokens: int, reps: int) -> dict[str, Any]:
    """agentcell's widget at one rate with `tokens` and 4x `tokens`: bytes and messages per token at both."""
    sizes = {"1x": tokens, "4x": 4 * tokens}
    variants = {
        name: (lambda n=n: run_variant(session, rec, "agentcell", n, rate)) for name, n in sizes.items()
    }
    samples = _common.interleaved(variants, reps=reps, warmup=0)
    out: dict[str, Any] = {"rate": rate, "tokens": sizes}
    for name, runs in samples.items():
        out[name] = {key: round(_common.median(r[key] for r in runs), 3)
                     for key in ("comm_bytes_per_1k_tokens", "comm_msgs_per_1k_tokens", "peak_msgs_per_s")}
    out["bytes_per_token_4x_over_1x"] = round(
        out["4x"]["comm_bytes_per_1k_tokens"] / max(out["1x"]["comm_bytes_per_1k_tokens"], 1e-9), 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--naive-rates", default="50,500,5000",
                        help="rates (tokens/s) at which the naive widget is measured too (comma-separated)")
    args = parser.parse_args()
    naive_rates = {int(r) for r in args.naive_rates.split(",") if r.strip()}
    # rate → tokens streamed per run (~10 s at 50/s, ~4 s at 500/s, ~2 s at 5,000/s).
    plan = {50: 500, 500: 2_000, 5_000: 10_000}
    if args.quick:
        plan, args.reps = {50: 100, 500: 500, 5_000: 2_000}, 1
    machine = _common.Machine()
    session = KernelSession(kernel_name="python3", extra_env={"AGENTCELL_JOURNAL": "off", "AGENTCELL_MODEL": "offline"})
    results: dict[str, Any] = {}
    rows = []
    try:
        session.run(SETUP, timeout=120)
        rec = Recorder(session)
        session.run("print(await bench_variant('agentcell', 50, 5000))", timeout=120)  # warm-up: first-use costs
        session.run("print(await bench_variant('naive', 50, 5000))", timeout=120)
        for rate, tokens in plan.items():
            kinds = ("quiet", "agentcell", "naive") if rate in naive_rates else ("quiet", "agentcell")
            variants = {
                kind: (lambda kind=kind, tokens=tokens, rate=rate: run_variant(session, rec, kind, tokens, rate))
                for kind in kinds
            }
            samples = _common.interleaved(variants, reps=args.reps, warmup=0, on_rep=lambda _r: machine.sample())
            results[str(rate)] = entry = summarise_rate(samples, tokens=tokens, reps=args.reps)
            for kind, v in entry["variants"].items():
                rows.append([rate, kind, round(v["tokens_per_s_achieved"]), v["comm_msgs_per_1k_tokens"],
                             v["peak_msgs_per_s"], round(v["comm_bytes_per_1k_tokens"]), v["cpu_ms_per_1k_tokens"],
                             f"x{v['cpu_ratio_vs_quiet']:.2f}"])
            print(f"rate {rate}/s done", flush=True)
        lin = linearity(session, rec, rate=500, tokens=plan[500], reps=args.reps)
    finally:
        session.close()
    payload = {"benchmark": "widget_traffic", "command": " ".join(["python", *sys.argv]), "rates": results,
               "linearity": lin, "machine": machine.facts()}
    path = _common.write_results("widget_traffic", payload)
    print(_common.table(rows, ["tok/s", "view", "achieved tok/s", "msgs/1k tok", "peak msgs/s", "bytes/1k tok",
                               "kernel CPU ms/1k tok", "CPU vs quiet"]))
    for rate, entry in results.items():
        if "naive_over_agentcell" in entry:
            r = entry["naive_over_agentcell"]
            print(f"{rate:>5} tok/s: naive sends x{r['comm_msgs']} the messages, x{r['comm_bytes']} the bytes, "
                  f"x{r['cpu']} the kernel CPU of agentcell's widget")
    print(f"linear in the text: at {lin['rate']} tok/s, {lin['tokens']['1x']} tokens "
          f"{lin['1x']['comm_bytes_per_1k_tokens']:.0f} B/1k tok, {lin['tokens']['4x']} tokens "
          f"{lin['4x']['comm_bytes_per_1k_tokens']:.0f} B/1k tok (x{lin['bytes_per_token_4x_over_1x']}); "
          f"peak msgs/s {lin['1x']['peak_msgs_per_s']} / {lin['4x']['peak_msgs_per_s']}")
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
