"""`journal.load` + `to_result` of a 1,000,000-event journal: linear (issue 18)?

Run: `python bench/journal_load.py` (about 2–4 minutes; `--events 200000` for a quick one). Writes
`bench/results/journal_load.json` and prints a table.

The journal is written by agentcell's own `Journal` (batched rows, as a run writes them): a run
start, a slot start, then `--events` events of a long tool-using answer — per round 400 token
deltas, then a tool call and its result — and no ending, as after a crash, so `to_result()` has to
reduce every event (a finished journal's last event already holds its result). Then, in a fresh
child process, `load()` reads it and `to_result()` rebuilds the run; both are stamped every 100,000
events (a counter around the per-row and per-event functions: the same instrumentation for every
block). Flat time per 100k events = linear.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import itertools

import _common

BLOCK = 100_000


def write(folder: Path, events: int) -> Path:
    from agentcell.events import RunStarted, SlotInfo, SlotStarted, TokenDelta, ToolCompleted, ToolStarted
    from agentcell.journal import Journal

    path = folder / "longjournal.jsonl"
    sink = Journal(path, max_bytes=None)
    sink.event(RunStarted(run_id="longjournal", model="function:bench", slots=(SlotInfo(name="answer", type="str"),)))
    sink.event(SlotStarted(run_id="longjournal", slot="answer", slot_type="str", index=0))
    n, rnd = 2, 1
    while n < events:
        for i in range(min(400, events - n)):
            sink.event(TokenDelta(run_id="longjournal", slot="answer", text=f"t{n + i} ", round=rnd))
        n += 400
        if n + 2 <= events:
            call = f"c{rnd}"
            sink.event(ToolStarted(run_id="longjournal", slot="answer", call_id=call, tool_name="lookup",
                                   args={"q": f"item {rnd}"}, round=rnd))
            sink.event(ToolCompleted(run_id="longjournal", slot="answer", call_id=call, tool_name="lookup",
                                     ok=True, result=f"result for item {rnd}", round=rnd))
            n += 2
        rnd += 1
    sink.flush()
    sink.close()
    return path


def child(path: Path) -> None:
    from agentcell import journal
    from agentcell.journal import reader
    from agentcell.transcript import Transcript

    stamps: dict[str, list[float]] = {"load": [], "to_result": []}

    def stamped(owner: Any, name: str, key: str) -> None:
        original = getattr(owner, name)
        count = 0

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            nonlocal count
            if count % BLOCK == 0:
                stamps[key].append(time.perf_counter())
            count += 1
            return original(*args, **kwargs)

        setattr(owner, name, wrapper)

    stamped(reader._Reader, "read", "load")
    stamped(Transcript, "apply_event", "to_result")
    started = time.perf_counter()
    record = journal.load("longjournal", path=path)
    loaded = time.perf_counter()
    stamps["load"].append(loaded)
    result = record.to_result()
    done = time.perf_counter()
    stamps["to_result"].append(done)
    blocks = {key: [round(b - a, 3) for a, b in itertools.pairwise(marks)] for key, marks in stamps.items()}
    print(json.dumps({"events": len(record.events), "load_s": round(loaded - started, 3),
                      "to_result_s": round(done - loaded, 3), "blocks_s": blocks,
                      "answer_chars": len(result.partial.get("answer", "")), "status": result.status}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child))
        return
    machine = _common.Machine()
    folder = Path(tempfile.mkdtemp(prefix="agentcell-bench-journal-"))
    started = time.perf_counter()
    path = write(folder, args.events)
    write_s = time.perf_counter() - started
    size = path.stat().st_size
    machine.sample()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(_common.ROOT / "src"), str(_common.ROOT)])}
    out = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                         env=env, check=False)
    machine.sample()
    path.unlink()
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    run = json.loads(out.stdout.strip().splitlines()[-1])
    rows = []
    for key in ("load", "to_result"):
        blocks = run["blocks_s"][key]
        full = blocks[:-1] if len(blocks) > 1 and args.events % BLOCK else blocks  # a partial last block
        median = sorted(full)[len(full) // 2]
        run[f"{key}_spread"] = [round(min(full) / median - 1, 3), round(max(full) / median - 1, 3)]
        rows.append([key, run[f"{key}_s"], " ".join(f"{b:.2f}" for b in blocks),
                     f"{run[f'{key}_spread'][0]:+.0%}/{run[f'{key}_spread'][1]:+.0%}"])
    payload = {"benchmark": "journal_load", "command": " ".join(["python", *sys.argv]), "events": args.events,
               "journal_bytes": size, "write_s": round(write_s, 3), "run": run, "machine": machine.facts()}
    result_path = _common.write_results("journal_load", payload)
    print(f"journal: {args.events:,} events, {size / 1024 / 1024:.1f} MB, written in {write_s:.1f} s")
    print(_common.table(rows, ["phase", "total s", f"s per {BLOCK:,} events", "spread vs median"]))
    print(f"load average during the run: {[load[0] for load in machine.loads if load]}")
    print(f"wrote {result_path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
