"""Python function calls per batch row, by variant (cProfile; load-independent but for timer ticks).

Run: `python bench/batch_calls.py VARIANT [ROWS]` for VARIANT in `raw` (raw pydantic-ai `run_stream`),
`raw-handler` (`Agent.run` + `event_stream_handler`), `engine` (one `engine.start` per row) and `map`
(`agentcell.map`, journal off); ROWS (default 500) at concurrency 64 after a 20-row warm-up. Prints the
calls per row. `bench/results/HISTORY-sessions-1-17.md` §7b compares them before and after a
change (run each from its checkout).
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from batch_instructions import CONCURRENCY, VARIANTS  # the same variants the instruction count runs (journal off)

import batch as bench

if __name__ == "__main__":
    variant, rows = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500
    run = VARIANTS[variant]
    asyncio.run(run(bench.words(20), CONCURRENCY))
    profile = cProfile.Profile()
    profile.enable()
    asyncio.run(run(bench.words(rows), CONCURRENCY))
    profile.disable()
    calls = sum(entry[1] for entry in pstats.Stats(profile).stats.values())  # type: ignore[attr-defined]
    print(f"{variant}: {calls / rows:,.0f} calls per row ({rows} rows, concurrency {CONCURRENCY})")
