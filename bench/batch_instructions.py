"""One batch variant, for counting its instructions per row under valgrind (load-independent).

Run: `valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/batch_instructions.py VARIANT ROWS`
for VARIANT in `raw` (the `bench/batch.py` baseline: `asyncio.gather` of raw pydantic-ai `run_stream`
runs of one shared `Agent`), `raw-handler` (the same with `Agent.run` + an
`event_stream_handler`), `engine` (one `engine.start` per row, journal off) and `map`
(`agentcell.map`, journal off) and `map+journal` (the same journalling every row, the default, into a temporary
folder), ROWS 0 (start-up and a 20-row warm-up only) and e.g. 200, all at
concurrency 64; valgrind prints `Collected : N` instructions, and (N(ROWS) − N(0)) / ROWS is a row's
cost. The 20 ms model sleep costs no instructions, so this is the CPU side of `bench/batch.py`'s
ratio at high concurrency, where the machine is CPU-bound (BENCHMARKS.md, batch throughput).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["AGENTCELL_JOURNAL"] = "off"

import batch as bench

CONCURRENCY = 64


async def run_map(rows: list[str], concurrency: int) -> object:
    return await bench.run_map(rows, concurrency, journal=False, widget=False)


async def run_map_journal(rows: list[str], concurrency: int) -> object:
    import tempfile

    return await bench.run_map(rows, concurrency, journal=tempfile.mkdtemp(prefix="agentcell-bench-"), widget=False)


VARIANTS = {"raw": bench.run_raw, "raw-handler": bench.run_raw_handler, "engine": bench.run_engine, "map": run_map,
            "map+journal": run_map_journal}

if __name__ == "__main__":
    variant, rows = sys.argv[1], int(sys.argv[2])
    asyncio.run(VARIANTS[variant](bench.words(20), CONCURRENCY))
    if rows:
        asyncio.run(VARIANTS[variant](bench.words(rows), CONCURRENCY))
