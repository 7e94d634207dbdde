"""What JupyterLab's table of contents spends on the static twin, by what the twin holds.

Run: `python bench/twin_toc.py [--reps 15]` (about 3 minutes). Writes `bench/results/twin_toc.json`.

Whenever a cell's outputs change, JupyterLab's table of contents reads every `text/html` output of the cell
again (`CodeCell.getHeadings`): its sanitizer, then the markup parsed into a detached element and searched for
headings, in one task. For the twin of the 50,000-token run of `bench/browser.py` that task took 30-59 ms at
the run's end (BENCHMARKS.md §4). Here the same pass runs in a JupyterLab page, with the page's own sanitizer,
on the twin of that run as the code renders it and on variants of it:

* `md30k` — today's twin: 30,000 characters of answer as Markdown (`static_view.MARKDOWN_BUDGET`), the rest as text;
* `md10k`, `md0` — 10,000 and no characters as Markdown (the rest as text, all of the answer kept);
* `md30k_noteach` — today's, without the folded teaching view.

The variants are interleaved, `--reps` times each, with a 30 ms pause before each pass; the page is opened
once per variant so that each variant is the first (cold) pass once: the table of contents meets the twin once
per change, not warm.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

import browser as B

PASS = """
async ([variants, reps]) => {
  const sanitizer = window.jupyterapp.shell.currentWidget.content.rendermime.sanitizer;
  const out = {};
  for (let rep = 0; rep < reps; rep++) {
    for (const [name, html] of variants) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const t0 = performance.now();
      const holder = document.createElement("div");
      holder.innerHTML = sanitizer.sanitize(html);
      for (const h of holder.querySelectorAll("h1, h2, h3, h4, h5, h6")) void h.textContent;
      (out[name] ??= []).push(+(performance.now() - t0).toFixed(2));
    }
  }
  return out;
}
"""


def twin_variants(tokens: int) -> dict[str, str]:
    """The twin's HTML for a `tokens`-token run of `bench/browser.py`'s Markdown model, and its variants."""
    import agentcell
    import agentcell.static_view as view
    from agentcell.transcript import Transcript
    from agentcell.wire import to_wire

    namespace: dict[str, Any] = {}
    setup = B.SETUP.format(base_url="http://127.0.0.1:9/v1", tokens=tokens)
    exec(setup[:setup.index("# JupyterLab loads MathJax")], namespace)  # the bench's own model, no display

    async def run() -> list[Any]:
        stream = agentcell.stream("Write a long answer. [[answer]]", model=namespace["long_md_model"])
        return [to_wire(event, t=0.0) async for event in stream]

    transcript = Transcript.from_wire(asyncio.run(run()))

    def html(budget: int, *, teaching: bool = True) -> str:
        kept, view.MARKDOWN_BUDGET = view.MARKDOWN_BUDGET, budget
        try:
            return view.transcript_html(transcript, teaching=teaching)
        finally:
            view.MARKDOWN_BUDGET = kept

    return {"md30k": html(30_000), "md10k": html(10_000), "md0": html(0), "md30k_noteach": html(30_000, teaching=False)}


def measure(variants: dict[str, str], reps: int) -> dict[str, Any]:
    names = list(variants)
    cold: dict[str, float] = {}
    warm: dict[str, list[float]] = {name: [] for name in names}
    for first in range(len(names)):
        order = names[first:] + names[:first]
        with B.lab_page("toc.ipynb", ["1"], timeout_ms=60_000) as page:
            page.wait_for_timeout(3000)
            passes = page.evaluate(PASS, [[[name, variants[name]] for name in order], reps])
        cold[order[0]] = passes[order[0]][0]
        for name in names:
            warm[name] += passes[name][1:]
        print(f"first {order[0]}: " + ", ".join(f"{n} {_common.median(passes[n]):.1f}" for n in order), flush=True)
    return {"sizes": {n: len(v) for n, v in variants.items()}, "cold_ms": cold,
            "warm_median_ms": {n: round(_common.median(v), 2) for n, v in warm.items()},
            "warm_p80_ms": {n: round(_common.percentile(v, 80), 2) for n, v in warm.items()}, "warm_ms": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=50_000)
    parser.add_argument("--quick", action="store_true", help="3 passes of a 5,000-token run's twin")
    args = parser.parse_args()
    reps, tokens = (3, 5_000) if args.quick else (args.reps, args.tokens)
    machine = _common.Machine()
    variants = twin_variants(tokens)
    payload: dict[str, Any] = {"benchmark": "twin_toc", "command": " ".join(["python", *sys.argv]), "tokens": tokens,
                               **measure(variants, reps)}
    payload["machine"] = machine.facts()
    path = _common.write_results("twin_toc", payload)
    rows = [[n, payload["sizes"][n], payload["cold_ms"][n], payload["warm_median_ms"][n], payload["warm_p80_ms"][n]]
            for n in variants]
    print(_common.table(rows, ["variant", "HTML chars", "cold ms", "warm median ms", "warm p80 ms"]))
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
