"""Batch throughput, widget traffic, memory and Dask: `agentcell.map` against raw pydantic-ai (issue 15).

Run: `python bench/batch.py` (about 10-15 minutes on 2 busy cores; `--quick` for a smoke run).
Writes `bench/results/batch.json` and prints tables.

Every row's model answers after 20 ms (a FunctionModel that sleeps, then streams one short text),
so the model is the same and cheap and what differs is the machinery around it:

* `raw` — the baseline: `asyncio.gather` of raw pydantic-ai `Agent.run_stream` runs, one per row,
  behind the same `asyncio.Semaphore(concurrency)`;
* `raw-handler` — the same with `Agent.run(..., event_stream_handler=...)` consuming every event: a raw
  run that streams its progress, the mechanism the engine is built on (issue 18's baseline); ratios
  are given against both;
* `engine` — `asyncio.gather` of agentcell engine runs (`engine.start(...)`, journal off) behind the
  same semaphore: what one row costs before the batch adds anything;
* `map` — `agentcell.map(..., journal=False)`: one engine run per row (transcript, events, budgets);
* `map+journal` — the same with the journal on (the default: every event of every row on disk,
  plus the batch manifest `--resume` reads);
* `map+widget` — the journal on and a `BatchWidget` attached (its messages are counted, with their
  times, to find the busiest second; in a plain process anywidget's comm drops them).

Throughput is measured at concurrency 1, 8 and 64 over 1,000 rows, variants interleaved in a
shuffled order. Memory: a fresh process runs 10,000 rows (concurrency 64, journal on, widget on)
and reports RSS growth per finished row after the first 200 rows, beside the size of the results
themselves. Dask: the same 1,000 rows on a `LocalCluster` of 2 processes (4 threads each) on
127.0.0.1 against in-kernel `map`, at concurrency 8 and 64.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

LATENCY = 0.02
TEMPLATE = "SHOUT: {{ item }} [[answer]]"


def model() -> Any:
    from pydantic_ai.models.function import FunctionModel

    async def answer(messages: list[Any], info: Any) -> Any:
        await asyncio.sleep(LATENCY)
        word = re.search(r"SHOUT: (\S+)", messages[-1].parts[-1].content)
        yield word.group(1).upper() if word else "?"

    return FunctionModel(stream_function=answer, model_name="twenty-ms")


def words(n: int) -> list[str]:
    return [f"w{i:05d}" for i in range(n)]


async def run_raw(rows: list[str], concurrency: int) -> list[str]:
    from pydantic_ai import Agent

    agent = Agent(model())
    gate = asyncio.Semaphore(concurrency)

    async def one(word: str) -> str:
        async with gate, agent.run_stream(f"SHOUT: {word}") as result:
            return await result.get_output()

    return await asyncio.gather(*(one(w) for w in rows))


async def run_raw_handler(rows: list[str], concurrency: int) -> list[str]:
    """Raw pydantic-ai that streams its events to a handler (`Agent.run(..., event_stream_handler=...)`): what
    a raw run must do to show its progress, and the mechanism the engine is built on (issue 18's baseline)."""
    from pydantic_ai import Agent

    agent = Agent(model())
    gate = asyncio.Semaphore(concurrency)

    async def consume(_ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    async def one(word: str) -> str:
        async with gate:
            return (await agent.run(f"SHOUT: {word}", event_stream_handler=consume)).output

    return await asyncio.gather(*(one(w) for w in rows))


async def run_engine(rows: list[str], concurrency: int) -> list[Any]:
    """The engine alone: one `engine.start` run per row behind the same semaphore, no batch around it."""
    from agentcell.engine import start
    from agentcell.options import RunOptions
    from agentcell.template import compile_template

    template, shared, gate = compile_template(TEMPLATE), model(), asyncio.Semaphore(concurrency)

    async def one(word: str) -> Any:
        async with gate:
            return await start(template, RunOptions(context={"item": word}, model=shared, journal=False)).wait()

    return await asyncio.gather(*(one(w) for w in rows))


async def run_map(rows: list[str], concurrency: int, *, journal: Any, widget: bool) -> dict[str, Any]:
    from agentcell.batch import map as agent_map

    batch = agent_map(TEMPLATE, rows, model=model(), concurrency=concurrency, journal=journal)
    sent: list[float] = []
    if widget:
        from agentcell.frontends.widget.batch_view import BatchWidget

        view = BatchWidget(batch)
        view.send = lambda _msg, *a, **k: sent.append(time.monotonic())  # type: ignore[method-assign]
    result = await batch
    assert all(r.status == "completed" for r in result.rows), result.counts
    return {"sent": sent}


RUNNERS = {"raw": run_raw, "raw-handler": run_raw_handler, "engine": run_engine}


def busiest_second(times: list[float]) -> int:
    return max((sum(1 for u in times if t <= u < t + 1.0) for t in times), default=0)


def throughput(n: int, concurrencies: list[int], reps: int, machine: _common.Machine) -> dict[str, Any]:
    out: dict[str, Any] = {}
    import agentcell.frontends.widget.batch_view  # noqa: F401 — imported before timing (anywidget, ipywidgets)

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run_raw(words(20), 8))  # warm-up: pydantic-ai's schemas, the engine's first run
        asyncio.run(run_map(words(20), 8, journal=Path(folder) / "warm", widget=True))
        for c in concurrencies:
            rows = words(n)
            traffic: list[dict[str, float]] = []

            def variant(kind: str, c: int = c, rows: list[str] = rows, traffic: list[Any] = traffic) -> Any:
                def go() -> dict[str, float]:
                    gc.collect()
                    start, cpu = time.perf_counter(), time.process_time()
                    if kind in RUNNERS:
                        asyncio.run(RUNNERS[kind](rows, c))
                        extra: dict[str, Any] = {"sent": []}
                    else:
                        journal = False if kind == "map" else Path(folder) / f"{kind}-{c}-{time.time_ns()}"
                        extra = asyncio.run(run_map(rows, c, journal=journal, widget=kind == "map+widget"))
                    wall = time.perf_counter() - start
                    if kind == "map+widget":
                        traffic.append({"messages": len(extra["sent"]), "per_s": len(extra["sent"]) / wall,
                                        "busiest_1s": busiest_second(extra["sent"])})
                    return {"wall": wall, "cpu": time.process_time() - cpu, "rows_per_s": len(rows) / wall}
                return go

            kinds = ("raw", "raw-handler", "engine", "map", "map+journal", "map+widget")
            samples = _common.interleaved({k: variant(k) for k in kinds},
                                          reps=reps, warmup=0, on_rep=lambda _r: machine.sample())
            out[str(c)] = {
                "samples": samples,
                "ratio_wall": {k: _common.paired_ratio(samples, k, "raw", "wall") for k in samples if k != "raw"},
                "ratio_cpu": {k: _common.paired_ratio(samples, k, "raw", "cpu") for k in samples if k != "raw"},
                "ratio_wall_vs_handler": {k: _common.paired_ratio(samples, k, "raw-handler", "wall")
                                          for k in samples if not k.startswith("raw")},
                "widget_traffic": traffic,
            }
            print(f"concurrency {c}: " + ", ".join(
                f"{k} {_common.median(s['wall'] for s in v):.2f} s" for k, v in samples.items()), flush=True)
    return out


MEMORY_CHILD = r"""
import asyncio, gc, json, pickle, resource, sys, tempfile, time
sys.path[:0] = {paths!r}
import batch as bench
from agentcell.batch import map as agent_map
from agentcell.frontends.widget.batch_view import BatchWidget

def rss_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

async def main(n):
    folder = tempfile.mkdtemp()
    marks = {{}}
    batch = agent_map(bench.TEMPLATE, bench.words(n), model=bench.model(), concurrency=64, journal=folder)
    view = BatchWidget(batch)
    view.send = lambda *a, **k: None
    while sum(r.finished for r in batch.rows) < 200:
        await asyncio.sleep(0.05)
    gc.collect()
    marks["after_200"] = (sum(r.finished for r in batch.rows), rss_kb())
    result = await batch
    view.flush()
    gc.collect()
    marks["end"] = (sum(r.finished for r in batch.rows), rss_kb())
    results_bytes = len(pickle.dumps(result.rows))
    print(json.dumps({{"marks": marks, "results_pickle_bytes": results_bytes, "rows": n,
                      "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))

asyncio.run(main({n}))
"""


def memory(n: int) -> dict[str, Any]:
    here = Path(__file__).resolve().parent
    code = MEMORY_CHILD.format(paths=[str(here), str(_common.ROOT / "src"), str(_common.ROOT)], n=n)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    (rows0, rss0), (rows1, rss1) = data["marks"]["after_200"], data["marks"]["end"]
    per_row_kb = (rss1 - rss0) / max(1, rows1 - rows0)
    data["rss_growth_kb_per_row"] = round(per_row_kb, 3)
    data["results_kb_per_row"] = round(data["results_pickle_bytes"] / 1024 / n, 3)
    print(f"memory: {n} rows, RSS +{per_row_kb:.2f} KB per finished row after the first {rows0} "
          f"(results alone {data['results_kb_per_row']:.2f} KB/row pickled)", flush=True)
    return data


def dask(n: int, concurrencies: list[int], machine: _common.Machine) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    async def main() -> dict[str, Any]:
        import logging

        logging.getLogger("distributed").setLevel(logging.ERROR)
        cluster = await LocalCluster(n_workers=2, threads_per_worker=4, processes=True, asynchronous=True,
                                     dashboard_address=None, host="127.0.0.1")
        client = await Client(cluster, asynchronous=True)
        from agentcell.batch import map as agent_map

        out: dict[str, Any] = {}
        try:
            await agent_map(TEMPLATE, words(16), model=model(), client=client, journal=False)  # warm the workers
            for c in concurrencies:
                row: dict[str, float] = {}
                for kind in ("kernel", "dask"):
                    start = time.perf_counter()
                    result = await agent_map(TEMPLATE, words(n), model=model(), concurrency=c, journal=False,
                                             client=client if kind == "dask" else None)
                    assert all(r.status == "completed" for r in result.rows), result.counts
                    row[kind] = time.perf_counter() - start
                    machine.sample()
                row["ratio_dask_vs_kernel"] = row["dask"] / row["kernel"]
                out[str(c)] = row
                print(f"dask vs kernel at concurrency {c}: {row['dask']:.2f} s vs {row['kernel']:.2f} s", flush=True)
        finally:
            await client.close()
            await cluster.close()
        return out

    return asyncio.run(main())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 rows, 1,000 for memory: a smoke run")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--memory-rows", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--skip", nargs="*", default=[], choices=["throughput", "memory", "dask"])
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 64])
    parser.add_argument("--out", default="batch", help="results file name (bench/results/OUT.json)")
    args = parser.parse_args()
    rows, memory_rows = (100, 1000) if args.quick else (args.rows, args.memory_rows)
    machine = _common.Machine()
    payload: dict[str, Any] = {"rows": rows, "latency_s": LATENCY}
    if "throughput" not in args.skip:
        payload["throughput"] = throughput(rows, args.concurrency, args.reps, machine)
    if "memory" not in args.skip:
        payload["memory"] = memory(memory_rows)
    if "dask" not in args.skip:
        payload["dask"] = dask(rows, [c for c in args.concurrency if c > 1] or [8], machine)
    payload["machine"] = machine.facts()
    path = _common.write_results(args.out if not args.quick else "batch-quick", payload)
    report(payload)
    print(f"\nwritten: {path}")


def report(payload: dict[str, Any]) -> None:
    if "throughput" in payload:
        lines = []
        for c, data in payload["throughput"].items():
            raw = _common.median(s["wall"] for s in data["samples"]["raw"])
            for kind, ratio in data["ratio_wall"].items():
                wall = _common.median(s["wall"] for s in data["samples"][kind])
                cpu = data["ratio_cpu"][kind]
                handler = data.get("ratio_wall_vs_handler", {}).get(kind)
                lines.append([c, kind, round(raw, 2), round(wall, 2), f"x{ratio:.2f}", f"x{cpu:.2f}",
                              "" if handler is None else f"x{handler:.2f}"])
            for t in data["widget_traffic"]:
                lines.append([c, "widget msgs", "", round(t["per_s"], 1), f"busiest 1 s: {t['busiest_1s']}", "", ""])
        print(_common.table(lines, ["concurrency", "variant", "raw wall s", "wall s", "wall vs raw", "cpu vs raw",
                                    "wall vs raw-handler"]))


if __name__ == "__main__":  # worker processes of the Dask LocalCluster re-import this module
    main()
