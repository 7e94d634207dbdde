"""One loop-overhead variant, for counting its instructions under valgrind (load-independent).

Run: `valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/loop_instructions.py VARIANT ROUNDS`
for VARIANT in `raw` (raw pydantic-ai `agent.run` + `event_stream_handler`), `engine` (journal off) and
`widget` (the notebook path, journal on), and ROUNDS 0 (start-up and a 5-round warm-up only) and 200;
valgrind prints `Collected : N` instructions. A variant's cost is N(200) − N(0); machine load does not
change it, so before/after and variant/raw ratios hold on a busy machine (BENCHMARKS.md §1d).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["AGENTCELL_JOURNAL"] = "off"

import loop_overhead as lo

VARIANTS = {
    "raw": lo.run_raw_handler,
    "engine": lambda m: lo.run_engine(m, journal=False),
    "widget": lo.run_widget,
}

if __name__ == "__main__":
    variant, rounds = sys.argv[1], int(sys.argv[2])
    asyncio.run(VARIANTS[variant](lo.tool_model(5)))
    if rounds:
        asyncio.run(VARIANTS[variant](lo.tool_model(rounds)))
