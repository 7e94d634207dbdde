"""The journal's own work for one batch row, replayed: for before/after comparisons a loaded machine cannot spoil.

Run: `valgrind --tool=callgrind --callgrind-out-file=/dev/null python bench/batch_journal.py N` for N = 0 and
e.g. 300; (instructions(N) − instructions(0)) / N is what the journal costs a row. Without valgrind it prints
the best CPU time per row of `--reps` passes (load spoils it; the instructions do not).

One row of `bench/batch.py` (`SHOUT: {{ item }} [[answer]]` on the 20 ms model) runs once with every call the
engine makes to its `Journal` recorded (13: the events, the slot's two message rows, the history); then the
same calls go to N fresh journals in a temporary folder, on a running event loop as in a run. Before the run's
last row each time, the response's run id is set anew, as pydantic-ai stamps a response after its row was
written: the last row then has what it has in a run to write again (`journal/ending.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import batch as bench


def record() -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """One batch row's calls to its journal, in order."""
    from agentcell.journal import writer

    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    names = ("event", "messages", "history")
    original = {name: getattr(writer.Journal, name) for name in names}

    def recorder(name: str) -> Any:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append((name, args, kwargs))
            return original[name](self, *args, **kwargs)
        return call

    for name in names:
        setattr(writer.Journal, name, recorder(name))
    try:
        asyncio.run(bench.run_map(bench.words(1), 1, journal=tempfile.mkdtemp(prefix="agentcell-bench-"),
                                  widget=False))
    finally:
        for name in names:
            setattr(writer.Journal, name, original[name])
    return calls


async def replay(calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]], rows: int, reps: int) -> float:
    """The best CPU seconds per row of `reps` passes of `rows` fresh journals each."""
    from pydantic_ai.messages import ModelResponse

    from agentcell.journal import Journal

    folder = Path(tempfile.mkdtemp(prefix="agentcell-bench-"))
    end = calls[-1][1][0]
    response = [m for m in end.result.messages if isinstance(m, ModelResponse)][-1]
    best = float("inf")
    for rep in range(reps):
        start = time.process_time()
        for row in range(rows):
            journal = Journal(folder / f"r{rep}-{row}.jsonl")
            for name, args, kwargs in calls:
                if args and args[0] is end:
                    response.run_id = "".join(list(response.run_id or "r"))  # set anew, as pydantic-ai does
                getattr(journal, name)(*args, **kwargs)
        best = min(best, time.process_time() - start)
    return best / max(rows, 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="?", default=300)
    parser.add_argument("--reps", type=int, default=1)
    args = parser.parse_args()
    calls = record()
    per_row = asyncio.run(replay(calls, args.rows, args.reps))
    print(f"{len(calls)} journal calls per row; {per_row * 1e6:.1f} µs CPU per row (best of {args.reps})")
