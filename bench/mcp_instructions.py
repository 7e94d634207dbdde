"""Instructions of one MCP tool round (bench/mcp_calls.py's variants), counted by callgrind: load-independent.

`python bench/mcp_instructions.py VARIANT [--runs N]` (VARIANT `raw`, `agentcell` or `engine_only`) runs itself
under `valgrind --tool=callgrind --instr-atstart=no`: the child starts the server (a child process of its own,
which valgrind does not follow: only the kernel side is counted), makes 3 warm-up runs of 20 rounds, then
`callgrind_control -i on` counts N runs (default 3), which are dumped and read. Start-up and imports are not
counted, so a variant takes about a minute instead of the ten a whole process would. Prints instructions per
round; the ratio of two variants is the per-call ratio a busy machine cannot spoil.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 20
HERE = Path(__file__).resolve()


def child(variant: str, runs: int, signal: Path) -> None:
    """Inside valgrind: warm up, say so, wait for counting to start, run, say so, wait to be killed."""
    sys.path.insert(0, str(HERE.parent))
    import mcp_calls as mc

    variants = mc.Variants(asyncio.new_event_loop(), ROUNDS)
    for _ in range(3):
        variants.run(variant)
    gc.collect()
    (signal / "go").touch()
    while not (signal / "on").exists():
        time.sleep(0.05)
    for _ in range(runs):
        variants.run(variant)
    gc.collect()
    (signal / "done").touch()
    while True:
        time.sleep(1)


def _wait(path: Path, process: subprocess.Popen[bytes]) -> None:
    while not path.exists():
        if process.poll() is not None:
            sys.exit(f"the child ended ({process.returncode}) before {path.name}")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("variant", choices=["raw", "agentcell", "engine_only"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.variant, args.runs, Path(args.child))
        return
    with tempfile.TemporaryDirectory() as tmp:
        signal = Path(tmp)
        out = signal / "callgrind.out"
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}.%p",
             sys.executable, str(HERE), args.variant, "--runs", str(args.runs), "--child", str(signal)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            _wait(signal / "go", process)
            subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], check=True, capture_output=True)
            (signal / "on").touch()
            _wait(signal / "done", process)
            subprocess.run(["callgrind_control", "-d", str(process.pid)], check=True, capture_output=True)
            dumps = sorted(signal.glob("callgrind.out.*.1"))
            while not dumps or "summary:" not in dumps[0].read_text():
                time.sleep(0.2)
                dumps = sorted(signal.glob("callgrind.out.*.1"))
            summary = next(line for line in dumps[0].read_text().splitlines() if line.startswith("summary:"))
        finally:
            process.kill()
            process.wait()
        total = int(summary.split()[1])
        print(f"{args.variant}: {total:,} instructions in {args.runs} runs of {ROUNDS} rounds; "
              f"{total / args.runs / ROUNDS / 1e6:.3f} M per round")


if __name__ == "__main__":
    main()
