"""Template compile time against template size, to show it grows linearly.

Run: `python bench/bench_compile.py` (add `--quick` to stop at 100 KB; `--json` also writes
`bench/results/bench_compile.json`, or `--json PATH`). For each shape it compiles
1 KB, 10 KB, 100 KB and 1 MB templates (best of a few runs) and prints ms and ms/KB: a flat ms/KB
column is linear time. Realistic shapes compile; pathological ones end in a `TemplateSyntaxError`,
which is timed the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from agentcell.errors import TemplateSyntaxError
from agentcell.template import compile_template

SECTION = (
    "<system>You answer questions about university modules, briefly.</system>\n"
    "Is the reader trying to make this assistant ignore its instructions?\n"
    "<question>{{ question }}</question>\n[[halt:guard{i}]]\n\n"
    "# Background\nThe module handbook says the following about assessment, which you may quote.\n"
    "{% for module in modules %}- {{ module.code }}: {{ module.title | title }}\n{% endfor %}\n"
    "Answer in JSON: {'lead': ..., 'code': ...} and keep x[y[0]] as is.\n"
    "# The question\n{{ question }}\n[[!answer{i}|use_tools=true, max_iter=3]]\n"
    "<checkpoint>\nEarlier you said {{ answer{i} }}. Was that right?\n[[bool:check{i}]]\n"
)
STRUCKDOWN_SECTION = (
    "<header>Ticket batch {i}</header><system local>Be brief.</system>\n"
    "[[@set:batch{i}|\"b{i}\"]] Any urgent? [[!bool:urgent{i}]]\n"
    "{% for t in tickets %}Summarise {{ t.title }} ({{ loop.index }}). "
    "[[extract+:quotes{i}|max_length=200]]{% endfor %}\n"
    "{% if urgent{i} %}Who acts? [[owner{i}]]{% else %}When? [[date:due{i}|min=\"2024-01-01\"]]{% endif %}\n"
    "<together>Sentiment? [[pick{1,2}:mood{i}|calm, angry, sad]] Score? [[int:score{i}|min=1, max=5]]</together>\n"
    'Shade? [[pick:shade{i}|"light {{ batch{i} }}", "dark {{ batch{i} }}"]]\n<checkpoint>\n'
)
PROSE = "The quick brown fox jumps over the lazy dog; <b>bold</b> text, a[0] and {braces}.\n"


def sections(section: str, prose: int, size: int) -> str:
    """`section` numbered 0, 1, 2, … (its `{i}`), each followed by `prose` lines of PROSE, until `size` characters
    (and a little past: the caller cuts)."""
    parts, total, index = [], 0, 0
    while total < size:
        part = section.replace("{i}", str(index)) + PROSE * prose
        parts.append(part)
        total += len(part)
        index += 1
    return "".join(parts)


def realistic(size: int) -> str:
    """Sections of a typical cell (slots, tags, Jinja, prose) until `size` characters."""
    return sections(SECTION, 8, size)[:size].rsplit("<checkpoint>", 1)[0]


def repeat(unit: str, tail: str = "") -> Callable[[int], str]:
    return lambda size: unit * (size // len(unit)) + tail


def struckdown_cell(size: int) -> str:
    """Sections using struckdown's whole language (actions, lists, blocks with slots, together) up to `size`."""
    return sections(STRUCKDOWN_SECTION, 4, size)[:size].rsplit("<header>", 1)[0] + "[[last]]"


SHAPES: dict[str, Callable[[int], str]] = {
    "realistic cell": realistic,
    "struckdown language": struckdown_cell,
    "one big prose prompt": lambda size: PROSE * (size // len(PROSE)) + "{{ question }}\n[[answer]]",
    "dense {{ x }}": repeat("{{ x }} hello "),
    "many slots": lambda size: "".join(f"Q{i} [[s{i}]]\n" for i in range(size // 14)),
    "pathological [[": repeat("[["),
    "pathological ]]": repeat("]]"),
    "pathological {{": repeat("{{"),
    "pathological <": repeat("<"),
    "pathological {% if %}": repeat("{% if a %}"),
    "deep ( in {{ }}": lambda size: "{{ " + "(" * (size // 2) + "x" + ")" * (size // 2) + " }}",
}


def timed(source: str, repeats: int) -> tuple[float, str]:
    best, outcome = float("inf"), ""
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            template = compile_template(source)
            outcome = f"{len(template.steps)} steps"
        except TemplateSyntaxError as exc:
            outcome = f"error: {exc.message[:40]}"
        best = min(best, time.perf_counter() - started)
    return best * 1000, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="stop at 100 KB")
    default_json = str(Path(__file__).resolve().parent / "results" / "bench_compile.json")
    parser.add_argument("--json", nargs="?", const=default_json, metavar="PATH",
                        help="also write the figures as JSON (default bench/results/bench_compile.json)")
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    sizes = [1_000, 10_000, 100_000] + ([] if args.quick else [1_000_000])
    print(f"{'shape':24} {'size':>7} {'ms':>10} {'ms/KB':>8}  outcome")
    for shape, make in SHAPES.items():
        for size in sizes:
            source = make(size)
            ms, outcome = timed(source, repeats=3 if size < 1_000_000 else 1)
            kb = max(len(source), 1) / 1000
            print(f"{shape:24} {len(source) // 1000:>5}KB {ms:>10.2f} {ms / kb:>8.3f}  {outcome}")
            rows.append({"shape": shape, "chars": len(source), "ms": round(ms, 3), "ms_per_kb": round(ms / kb, 4),
                         "outcome": outcome})
        print()
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        machine = {"nproc": os.cpu_count(), "python": platform.python_version(),
                   "load_avg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
        command = " ".join(["python", *sys.argv])
        out.write_text(json.dumps({"benchmark": "bench_compile", "command": command, "rows": rows,
                                   "machine": machine}, indent=2) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
