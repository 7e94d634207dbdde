"""`--types` load time against file size (linear up to the cap), and how fast the hostile inputs are refused.

Run: `python bench/type_files.py` (`--quick`: the smallest file and the bombs, once; `--json` also
writes `bench/results/type_files.json`, or `--json PATH`). It loads type files of 16 KB, 64 KB and
256 KB (the cap, `MAX_TYPES_BYTES`; best of a few runs) and prints ms and ms per type: a flat
ms/type column is linear time. Then it times what issue 40 found: the nine-level alias bomb
(0.6 KB), a 5 MB file of 20,000 types, and three template files that each include the next 100
times; each should end in its one-line error at once.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from agentcell.errors import AgentcellError  # noqa: E402
from agentcell.template import compile_template, load_types  # noqa: E402
from agentcell.template.yaml_read import MAX_TYPES_BYTES  # noqa: E402
from tests.adversarial.bombs import alias_bomb, include_bomb  # noqa: E402

TYPE = (
    "---\nname: Type{i}\ndescription: Type number {i}, a person named in the text\nfields:\n"
    "  name: {{type: str, required: true}}\n  age: {{type: int, ge: 0, le: 150}}\n  skills: list[str]\n"
    "  born: date\n  mood: {{type: str, choices: [calm, cross]}}\n"
)


def types_file(folder: Path, size: int) -> tuple[Path, int]:
    text, count = "", 0
    while len(text) + len(TYPE) + 10 < size:
        text += TYPE.format(i=count)
        count += 1
    path = folder / f"types_{size}.yaml"
    path.write_text(text)
    return path, count


def best_of(runs: int, action: Callable[[], object]) -> tuple[float, str]:
    times, outcome = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        try:
            action()
            outcome = "loaded"
        except AgentcellError as exc:
            outcome = f"{type(exc).__name__}: {str(exc).splitlines()[0][-100:]}"
        times.append(time.perf_counter() - start)
    return min(times) * 1000, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 16 KB file and the bombs, one run each")
    parser.add_argument("--json", nargs="?", const=str(ROOT / "bench/results/type_files.json"), default=None)
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = 1 if args.quick else 3
        for size in (16 * 1024,) if args.quick else (16 * 1024, 64 * 1024, MAX_TYPES_BYTES):
            path, count = types_file(folder, size)
            ms, outcome = best_of(runs, lambda path=path: load_types([path]))
            rows.append({"case": f"{size // 1024} KB of types", "types": count, "ms": ms, "ms_per_type": ms / count,
                         "outcome": outcome})  # fmt: skip
        bomb = folder / "bomb.yaml"
        bomb.write_text(alias_bomb(9))
        big = folder / "many.yaml"
        big.write_text("".join(TYPE.format(i=i) for i in range(20_000)))
        include_bomb(folder, 100)
        hostile: dict[str, Callable[[], object]] = {
            f"alias bomb ({bomb.stat().st_size} bytes)": lambda: load_types([bomb]),
            f"20,000 types ({big.stat().st_size / 1e6:.1f} MB)": lambda: load_types([big]),
            "include bomb (100 x 100 x 100)": lambda: compile_template('<include src="a.sd"/>[[a]]', base_dir=folder),
        }
        for case, action in hostile.items():
            ms, outcome = best_of(runs, action)
            rows.append({"case": case, "ms": ms, "outcome": outcome})
    for row in rows:
        per = f"{row['ms_per_type']:8.2f} ms/type" if "ms_per_type" in row else " " * 16
        print(f"{row['case']:<34} {row['ms']:10.1f} ms {per}  {row['outcome']}")
    if args.json:
        record = {"rows": rows, "load_average": os.getloadavg(), "python": platform.python_version()}
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
