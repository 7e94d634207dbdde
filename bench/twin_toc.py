"""What JupyterLab's table of contents spends on the static twin, by what the twin holds.

Run: `python bench/twin_toc.py [--reps 15]` (about 3 minutes). Writes `bench/results/twin_toc.json`.

Whenever a cell's outputs change, JupyterLab's table of contents reads every `text/html` output of the cell
again (`CodeCell.getHeadings`): its sanitizer, then the markup parsed into a detached element and searched for
headings, in one task. For the twin of the 50,000-token run of `bench/browser.py` that task took 30-59 ms at
the run's end (bench/results/HISTORY-sessions-1-17.md §4). Here the same pass runs in a JupyterLab page, with
the page's own sanitizer, on the twin of that run as the code renders it and on variants of it:

* `md30k` — today's twin: 30,000 characters of answer as Markdown (`static_view.MARKDOWN_BUDGET`), the rest as text;
* `md10k`, `md0` — 10,000 and no characters as Markdown (the rest as text, all of the answer kept);
* `md30k_noteach` — today's, without the folded teaching view.

The variants are interleaved, `--reps` times each, with a 30 ms pause before each pass; the page is opened
once per variant so that each variant is the first (cold) pass once: the table of contents meets the twin once
per change, not warm.

**JupyterLab's own baseline** (`--shows`, default 6): today's twin HTML, and one paragraph of HTML, shown by a
plain cell, `display(HTML(html))`, no agentcell involved, interleaved, under a Chrome trace; per show, the
main-thread task that applies the output (the one that parses its HTML) and the table of contents' pass after it
(a timer task).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

import browser as B
from tests.browser import lab as labmod

PLAIN_CELLS = ["from pathlib import Path\nfrom IPython.display import HTML, display\n"
               "H = {{p.stem: p.read_text(encoding='utf-8') for p in Path({path!r}).glob('*.html')}}",
               "display(HTML(H[{name!r}]))"]
SMALL = "<p>One paragraph of <strong>HTML</strong>.</p>"

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
    import agentcell.render.html as view
    from agentcell.events.json import to_wire
    from agentcell.transcript import Transcript

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


def plain_cell(htmls: dict[str, str], shows: int, workdir: Path) -> dict[str, Any]:
    """JupyterLab showing each of `htmls` from a plain `display(HTML(...))` cell, interleaved, traced: the task
    applying the output (it parses the HTML) and the table of contents' timer task after it, per show (ms;
    0 when no such task passed 8 ms)."""
    for name, html in htmls.items():
        (workdir / f"{name}.html").write_text(html, encoding="utf-8")
    cells = [PLAIN_CELLS[0].format(path=str(workdir)), "pass"]
    out: dict[str, Any] = {}
    with B.lab_page("plain.ipynb", cells, timeout_ms=60_000) as page:
        labmod.run_cell(page, 0)
        labmod.wait_cell_done(page, 0)
        cdp = page.context.new_cdp_session(page)
        for _ in range(shows):
            for name in htmls:
                page.evaluate(B.SET_SOURCE, [1, PLAIN_CELLS[1].format(name=name)])
                page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
                page.wait_for_timeout(1000)
                cdp.send("Tracing.start", {"categories": B.TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})
                page.wait_for_timeout(300)
                labmod.run_cell(page, 1)
                page.wait_for_timeout(2500)
                tasks = B.long_task_anatomy(B.read_trace(cdp), 8.0)
                row = out.setdefault(name, {"applied_ms": [], "toc_ms": []})
                row["applied_ms"].append(max((t["ms"] for t in tasks if any("ParseHTML" in x for x in t["inside"])
                                              and not any("TimerFire" in x for x in t["inside"])), default=0.0))
                row["toc_ms"].append(max((t["ms"] for t in tasks if any("TimerFire" in x for x in t["inside"])),
                                         default=0.0))
                print(f"plain cell, {name}: applied {row['applied_ms'][-1]:.1f} ms, "
                      f"table of contents {row['toc_ms'][-1]:.1f} ms", flush=True)
    for row in out.values():
        row["applied_median_ms"] = _common.median(row["applied_ms"])
        row["toc_median_ms"] = _common.median(row["toc_ms"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--tokens", type=int, default=50_000)
    parser.add_argument("--shows", type=int, default=6, help="plain-cell shows of today's twin (0: none)")
    parser.add_argument("--quick", action="store_true", help="3 passes of a 5,000-token run's twin, 2 shows")
    args = parser.parse_args()
    reps, tokens, shows = (3, 5_000, 2) if args.quick else (args.reps, args.tokens, args.shows)
    machine = _common.Machine()
    variants = twin_variants(tokens)
    payload: dict[str, Any] = {"benchmark": "twin_toc", "command": " ".join(["python", *sys.argv]), "tokens": tokens,
                               **measure(variants, reps)}
    if shows:
        with tempfile.TemporaryDirectory() as workdir:
            payload["plain_cell"] = plain_cell({"twin": variants["md30k"], "small": SMALL}, shows, Path(workdir))
    payload["machine"] = machine.facts()
    path = _common.write_results("twin_toc", payload)
    rows = [[n, payload["sizes"][n], payload["cold_ms"][n], payload["warm_median_ms"][n], payload["warm_p80_ms"][n]]
            for n in variants]
    print(_common.table(rows, ["variant", "HTML chars", "cold ms", "warm median ms", "warm p80 ms"]))
    for name, plain in payload.get("plain_cell", {}).items():
        print(f"plain cell showing {name}: applying it {plain['applied_ms']} ms (median "
              f"{plain['applied_median_ms']:.1f}), table of contents {plain['toc_ms']} ms "
              f"(median {plain['toc_median_ms']:.1f})")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
