"""Comparing N models: `agentcell.compare` wall time against the slowest model's single run (issue 43).

Run: `python bench/compare.py` (about two minutes; `--quick` for a smoke run).
Writes `bench/results/compare.json` and prints a table.

Three scripted models of different speeds, each a `FunctionModel` that sleeps before each response (its
"latency", a hosted model's order of magnitude) and calls one tool per round before answering: `hasty`
(1 request, 200 ms), `careful` (3 requests, 300 ms each) and `looping` (6 requests, 250 ms each: the
slowest, 1.5 s of model time). Every
repetition runs, in a shuffled order, each model alone (`agentcell.complete_async`) and the three
compared (`agentcell.compare`, awaited); the figure is the median over repetitions of
compare / the slowest single run of the same repetition. Goal: ≤ ×1.10. Both with the journal off and
on (the default, into a temporary folder). Also reported: the comparison's process CPU ÷ the three single
runs' CPU added up (what comparing costs beyond the runs themselves).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

GOAL = 1.10
TEMPLATE = "Look the item up, then answer. [[answer|use_tools=true]]"
MODELS = {"hasty": (1, 0.2), "careful": (3, 0.3), "looping": (6, 0.25)}
"""Model name → (requests of its run, seconds each response takes)."""


def scripted(name: str) -> Any:
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models.function import DeltaToolCall, FunctionModel

    requests, latency = MODELS[name]

    async def fn(messages: list[Any], _info: Any) -> Any:
        await asyncio.sleep(latency)
        done = sum(isinstance(m, ModelResponse) for m in messages)
        if done < requests - 1:
            args = json.dumps({"q": f"item {done}"})
            yield {0: DeltaToolCall(name="lookup", json_args=args, tool_call_id=f"c{done}")}
        else:
            yield f"{name} is done after {done} tool calls."

    return FunctionModel(stream_function=fn, model_name=name)


async def lookup(q: str) -> str:
    """Look `q` up."""
    return f"result for {q}"


async def single(name: str, journal: Any) -> dict[str, float]:
    from agentcell import complete_async

    t0, c0 = time.perf_counter(), time.process_time()
    result = await complete_async(TEMPLATE, model=scripted(name), tools=[lookup], journal=journal)
    assert result.status == "completed", result.error
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


async def compared(journal: Any) -> dict[str, float]:
    from agentcell import compare

    t0, c0 = time.perf_counter(), time.process_time()
    comparison = await compare(TEMPLATE, models=[scripted(n) for n in MODELS], tools=[lookup], journal=journal)
    assert all(r.status == "completed" for r in comparison.results.values())
    return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}


async def measure(reps: int, journal: Any) -> dict[str, list[dict[str, float]]]:
    """Each variant once per repetition, in a shuffled order (`_common.interleaved`, but awaited)."""
    import random

    rng = random.Random(1)
    names = [*MODELS, "compare"]
    out: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for rep in range(reps + 1):
        order = names[:]
        rng.shuffle(order)
        for name in order:
            value = await (compared(journal) if name == "compare" else single(name, journal))
            if rep:  # the first repetition warms up and is dropped
                out[name].append(value)
    return out


def ratios(samples: dict[str, list[dict[str, float]]]) -> list[float]:
    slowest = [max(samples[n][i]["wall"] for n in MODELS) for i in range(len(samples["compare"]))]
    return [c["wall"] / s for c, s in zip(samples["compare"], slowest, strict=True)]


def cpu_ratios(samples: dict[str, list[dict[str, float]]]) -> list[float]:
    """The comparison's process CPU ÷ the three single runs' CPU added up (1.0: comparing costs no CPU of its own)."""
    total = [sum(samples[n][i]["cpu"] for n in MODELS) for i in range(len(samples["compare"]))]
    return [c["cpu"] / t for c, t in zip(samples["compare"], total, strict=True) if t > 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 repetitions")
    args = parser.parse_args()
    if args.quick:
        args.reps = 3
    machine = _common.Machine()
    report: dict[str, Any] = {"models": {n: {"requests": r, "latency_s": d} for n, (r, d) in MODELS.items()},
                              "goal": GOAL, "reps": args.reps}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        os.environ["AGENTCELL_JOURNAL"] = folder
        for label, journal in (("journal off", False), ("journal on", None)):
            samples = asyncio.run(measure(args.reps, journal))
            r, cpu = ratios(samples), cpu_ratios(samples)
            walls = {n: _common.median(s["wall"] for s in samples[n]) for n in samples}
            report[label] = {"ratio_median": _common.median(r), "ratio_p90": _common.percentile(r, 90),
                             "cpu_ratio_median": _common.median(cpu), "wall_median_s": walls, "samples": samples}
            rows.append([label, *(walls[n] for n in MODELS), walls["compare"], _common.median(r),
                         _common.percentile(r, 90), _common.median(cpu), "yes" if _common.median(r) <= GOAL else "no"])
            machine.sample()
    report["machine"] = machine.facts()
    path = _common.write_results("compare", report)
    print(_common.table(rows, ["variant", *(f"{n} s" for n in MODELS), "compare s", "x slowest", "p90",
                               "cpu x sum", "met"]))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
