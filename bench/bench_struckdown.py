"""Compile time per template, side by side: agentcell's `compile_template` and struckdown 0.18's `parse_syntax`.

struckdown is never a dependency of agentcell: it needs Python 3.12, so it lives in a separate bench
venv, e.g.::

    python3.12 -m venv /tmp/sd-bench-venv && /tmp/sd-bench-venv/bin/pip install 'struckdown==0.18.*'
    python bench/bench_struckdown.py --struckdown-python /tmp/sd-bench-venv/bin/python [--json]

The same templates (below: one per construct of the shared language, plus the same cell repeated to
~10 KB) are timed in both, interleaved in rounds, best of each round's repeats; the figure is the
median over rounds of struckdown's time / agentcell's time per template. agentcell compiles
everything `parse_syntax` does (checks, types, Jinja compiled up front); struckdown's own run-time
re-parsing is not counted, so the ratio is conservative.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

TEMPLATES: dict[str, str] = {
    "plain": "What is the capital of France? [[answer]]",
    "typed": "Is the sky blue? [[bool:is_blue]] Rate it: [[int:score|min=1,max=10]] Mood? [[pick:mood|calm,wild]]",
    "quantifiers": "Three ideas [[ideas{3}]] Tags? [[pick{1,3}:tags|urgent,billing,bug]] Quotes [[extract+:quotes]]",
    "temporal": "The review moved to next Tuesday at 3pm. [[datetime:when]] Dates? [[date*:dates]] [[duration:d]]",
    "system": "<system>You are a tutor.</system>\n<system local>Be brief.</system>\nQuestion: {{ q }}\n[[!answer]]",
    "checkpoints": "Extract the name: [[extract:name]]\n<checkpoint>\nHello {{ name }}, tell me more: [[more]]",
    "header": "<header>Essay: {{ essay }}</header>\nGrade it. [[grade]]\n<checkpoint>\nComment. [[comment]]",
    "together": "Review: {{ review }}\n<together>\nSentiment? [[pick:s|positive,negative]]\n"
                "Complaint? [[complaint]]\n</together>\nReply. [[reply]]",
    "actions": '[[@set:topic|"cats"]] [[@timestamp:now]] Tell me about {{ topic }}. [[fact]]',
    "conditionals": "Urgent? [[!bool:urgent]]\n{% if urgent %}\nWho must act today? [[owner]]\n{% endif %}\n"
                    "Reply: [[reply]]",
    "jinja text": "{% for item in items %}- {{ item.name }}: {{ item.description }}\n{% endfor %}\n[[review]]",
    "dynamic options": 'Colour? [[colour]] Shade? [[pick:shade|"light {{ colour }}","dark {{ colour }}"]]',
    "comments": "<!-- hidden [[x]] -->\nWrite a joke about {{ topic }}\n[[joke]]",
    "llm options": "[[think:reasoning|temperature=0.3]] [[respond:summary|thinking=off, seed=7]]",
}


def _scaled(size: int) -> str:
    # A name is used once per segment: each template is its own segment.
    unit = "\n<checkpoint>\n".join(TEMPLATES.values())
    return "\n<checkpoint>\n".join(unit for _ in range(max(1, size // len(unit))))


TEMPLATES["10 KB cell"] = _scaled(10_000)

_STRUCKDOWN = r"""
import json, logging, os, sys, time, warnings
os.environ.setdefault("STRUCKDOWN_CACHE", "0")
logging.disable(logging.CRITICAL)
warnings.filterwarnings("ignore")
from struckdown.parsing import parse_syntax
templates, repeats = json.load(open(sys.argv[1])), int(sys.argv[2])
out = {}
for name, source in templates.items():
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            parse_syntax(source)
        except Exception:
            pass
        best = min(best, time.perf_counter() - started)
    out[name] = best
print(json.dumps(out))
"""


def time_agentcell(templates: dict[str, str], repeats: int) -> dict[str, float]:
    from agentcell.template import compile_template

    out = {}
    for name, source in templates.items():
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            compile_template(source)
            best = min(best, time.perf_counter() - started)
        out[name] = best
    return out


def time_struckdown(python: str, path: str, repeats: int) -> dict[str, float]:
    result = subprocess.run([python, "-c", _STRUCKDOWN, path, str(repeats)], capture_output=True, text=True, check=True)
    return {name: float(value) for name, value in json.loads(result.stdout.strip().splitlines()[-1]).items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--struckdown-python", required=True, help="python of a venv with struckdown 0.18 installed")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    default_json = str(Path(__file__).resolve().parent / "results" / "bench_struckdown.json")
    parser.add_argument("--json", nargs="?", const=default_json, metavar="PATH")
    args = parser.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(TEMPLATES, handle)
    ratios: dict[str, list[float]] = {name: [] for name in TEMPLATES}
    ours_ms: dict[str, list[float]] = {name: [] for name in TEMPLATES}
    theirs_ms: dict[str, list[float]] = {name: [] for name in TEMPLATES}
    time_agentcell(TEMPLATES, 2)  # warm-up: imports, Jinja's own caches
    for _ in range(args.rounds):
        theirs = time_struckdown(args.struckdown_python, handle.name, args.repeats)
        ours = time_agentcell(TEMPLATES, args.repeats)
        for name in TEMPLATES:
            ratios[name].append(theirs[name] / ours[name])
            ours_ms[name].append(ours[name] * 1000)
            theirs_ms[name].append(theirs[name] * 1000)
    os.unlink(handle.name)
    rows = []
    print(f"{'template':18} {'agentcell ms':>13} {'struckdown ms':>14} {'ratio':>7}")
    for name in TEMPLATES:
        row = {
            "template": name,
            "chars": len(TEMPLATES[name]),
            "agentcell_ms": round(statistics.median(ours_ms[name]), 4),
            "struckdown_ms": round(statistics.median(theirs_ms[name]), 4),
            "ratio": round(statistics.median(ratios[name]), 2),
        }
        rows.append(row)
        print(f"{name:18} {row['agentcell_ms']:>13.3f} {row['struckdown_ms']:>14.3f} {row['ratio']:>6.1f}×")
    small = [row["ratio"] for row in rows if row["template"] != "10 KB cell"]
    print(f"\nmedian ratio over the {len(small)} single-construct templates: {statistics.median(small):.1f}× "
          f"(lowest {min(small):.1f}×)")
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        machine = {"nproc": os.cpu_count(), "python": platform.python_version(),
                   "load_avg_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
        out.write_text(json.dumps({"benchmark": "bench_struckdown", "command": " ".join(["python", *sys.argv]),
                                   "rows": rows, "median_ratio": statistics.median(small), "machine": machine},
                                  indent=2) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
