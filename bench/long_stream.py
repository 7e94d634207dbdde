"""A 1,000,000-token answer through the widget path vs raw pydantic-ai (issue 18): linear, bounded memory.

Run: `python bench/long_stream.py` (about 5 minutes on 2 cores; `--tokens 100000` for a quick one).
Writes `bench/results/long_stream.json` and prints a table.

The same scripted `FunctionModel` streams `--tokens` text deltas (`"t123 "`, ~7.9 bytes each at 1M).
Each variant runs in a fresh child process (so peak RSS is its own), after a small warm-up run:

* `raw` — the baseline: `Agent(model).run(..., event_stream_handler=...)` consuming every event, **no
  token limit** (pydantic-ai's token check costs O(n) per event; see docs/pydantic-ai.md);
* `widget` — the notebook path: `handle.launch(...)` with an `AgentWidget` (its `send` captured), the
  journal on (a temp folder, as by default) and agentcell's own output-token ceiling in force
  (raised to 2 × the tokens, so it is counted on every delta but not hit).

Measured: wall and CPU time; the time of each tenth of the tokens (stamped by the model as it yields,
the same instrumentation in both variants: flat tenths = linear); the child's peak RSS
(`ru_maxrss`) and its RSS just before the run; the comm messages the widget sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

import _common


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def model(tokens: int, marks: list[float]) -> Any:
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    tenth = max(tokens // 10, 1)

    async def fn(_messages: list[Any], _info: AgentInfo) -> Any:
        for i in range(tokens):
            if i % tenth == 0:
                marks.append(time.perf_counter())
            yield f"t{i} "
        marks.append(time.perf_counter())

    return FunctionModel(stream_function=fn)


async def run_raw(tokens: int, marks: list[float]) -> dict[str, Any]:
    from pydantic_ai import Agent

    agent = Agent(model(tokens, marks))
    seen = 0

    async def handler(_ctx: Any, events: Any) -> None:
        nonlocal seen
        async for _ in events:
            seen += 1

    result = await agent.run("Go", event_stream_handler=handler)
    return {"events": seen, "answer_chars": len(result.output)}


async def run_widget(tokens: int, marks: list[float]) -> dict[str, Any]:
    from pydantic_ai.usage import UsageLimits

    from agentcell.frontends.handle import launch
    from agentcell.frontends.launch import LaunchSpec
    from agentcell.frontends.widget.widget import AgentWidget
    from agentcell.options import RunOptions
    from agentcell.template import compile_template

    sent = {"messages": 0}

    def send(self: AgentWidget, content: dict[str, Any], buffers: Any = None) -> None:
        sent["messages"] += 1

    AgentWidget.send = send  # type: ignore[method-assign]  # bench only: count what would go on the wire
    options = RunOptions(model=model(tokens, marks), limits=UsageLimits(output_tokens_limit=2 * tokens))
    handle = launch(LaunchSpec(template=compile_template("Go [[answer]]"), options=options))
    result = await handle
    assert result.status == "completed", result.error
    assert handle.widget is not None and handle.widget.status == "completed"
    return {"comm_messages": sent["messages"], "answer_chars": len(result.answer or "")}


VARIANTS = {"raw": run_raw, "widget": run_widget}


def child(variant: str, tokens: int) -> None:
    os.environ["AGENTCELL_JOURNAL"] = tempfile.mkdtemp(prefix="agentcell-bench-long-")
    fn = VARIANTS[variant]
    asyncio.run(fn(2_000, []))  # warm-up: imports, serializers, schemas
    before = rss_mb()
    marks: list[float] = []
    started, cpu0 = time.perf_counter(), time.process_time()
    extra = asyncio.run(fn(tokens, marks))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    tenths = [round(b - a, 3) for a, b in itertools.pairwise(marks)]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    print(json.dumps({"variant": variant, "tokens": tokens, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
                      "tenths_s": tenths, "rss_before_mb": round(before, 1), "peak_rss_mb": round(peak, 1),
                      **extra}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--variants", default="raw,widget")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.tokens)
        return
    machine = _common.Machine()
    text_bytes = sum(len(f"t{i} ") for i in range(args.tokens))
    runs: dict[str, Any] = {}
    for variant in args.variants.split(","):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_common.ROOT / "src"), str(_common.ROOT)])}
        out = subprocess.run([sys.executable, __file__, "--child", variant, "--tokens", str(args.tokens)],
                             capture_output=True, text=True, env=env, check=False)
        machine.sample()
        if out.returncode != 0:
            raise SystemExit(f"{variant} failed:\n{out.stderr[-3000:]}")
        runs[variant] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"  {variant}: {runs[variant]['wall_s']} s", flush=True)
    rows = []
    for name, run in runs.items():
        tenths = run["tenths_s"]
        median = sorted(tenths)[len(tenths) // 2]
        run["tenth_spread"] = [round(min(tenths) / median - 1, 3), round(max(tenths) / median - 1, 3)]
        run["rss_budget_mb"] = round(3 * text_bytes / 1024 / 1024 + 150, 1)
        if "raw" in runs:
            run["wall_vs_raw"] = round(run["wall_s"] / runs["raw"]["wall_s"], 3)
        rows.append([name, run["wall_s"], run["cpu_s"], f"x{run.get('wall_vs_raw', float('nan')):.3f}",
                     " ".join(f"{t:.2f}" for t in tenths),
                     f"{run['tenth_spread'][0]:+.0%}/{run['tenth_spread'][1]:+.0%}",
                     run["rss_before_mb"], run["peak_rss_mb"], run["rss_budget_mb"]])
    payload = {"benchmark": "long_stream", "command": " ".join(["python", *sys.argv]), "tokens": args.tokens,
               "text_bytes": text_bytes, "runs": runs, "machine": machine.facts()}
    path = _common.write_results("long_stream", payload)
    print(_common.table(rows, ["variant", "wall s", "cpu s", "vs raw", "tenths (s)", "tenth spread vs median",
                               "RSS before MB", "peak RSS MB", "budget MB"]))
    print(f"text: {text_bytes / 1024 / 1024:.1f} MB; load average during the run: "
          f"{[load[0] for load in machine.loads if load]}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
