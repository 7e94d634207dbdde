"""What JupyterLab spends applying the static twin's update at a run's end, by what the twin holds.

Run: `python bench/twin_update.py [--reps 6]` (about 4 minutes). Writes `bench/results/twin_update.json`.

One 50,000-token Markdown run (`bench/browser.py`'s notebook) ends in the browser; then a cell re-publishes
its twin (`update_display` on the twin's display id) in turn with each variant below, after resetting it to
the empty placeholder, under a Chrome trace. The figure per update is the longest main-thread task and every
task over 8 ms in the 2.5 s after it (JupyterLab decoding the message, copying it into the notebook's shared
model, rendering the HTML, MathJax, the prompt overlay, its table of contents). Variants, interleaved:

* `before` — session 12's twin: the whole answer in `text/plain`, the body not kept from MathJax;
* `full_plain` — today's HTML with the whole answer in `text/plain`;
* `no_wrapper` — today's plain text with the HTML not kept from MathJax;
* `after` — the twin as `AgentWidget.static_bundle()` makes it now.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

import browser as B
from tests.browser import lab as labmod

VARIANTS_CELL = r'''
from IPython.display import update_display
from agentcell.render.html import NO_MATH, transcript_text
from agentcell.transcript import Transcript
w = _agent_run.widget
data, md = w.static_bundle()
full = transcript_text(Transcript.from_wire(w.final), w.output_metadata)
bare = data["text/html"].replace(f'<div class="{NO_MATH}">', "", 1)[:-len("</div>")]
V = {"before": {"text/html": bare, "text/plain": full},
     "full_plain": {"text/html": data["text/html"], "text/plain": full},
     "no_wrapper": {"text/html": bare, "text/plain": data["text/plain"]}, "after": data}
EMPTY = {"text/html": '<div class="agentcell-static" data-status="running"></div>', "text/plain": ""}
print({k: [len(v["text/html"]), len(v["text/plain"])] for k, v in V.items()})
'''


def main_thread_tasks(events: list[dict[str, Any]], over_ms: float) -> list[float]:
    return sorted((e["dur"] / 1000 for e in B.main_thread_spans(events)
                   if e["name"] == "RunTask" and e.get("dur", 0) > over_ms * 1000), reverse=True)


def finished_run(page: Any) -> str:
    """Run the notebook to the end of its 50,000-token run; the variants' sizes (HTML, plain text)."""
    for i in (0, 1):
        labmod.run_cell(page, i)
        labmod.wait_cell_done(page, i)
    page.evaluate(B.OBSERVE)
    labmod.run_cell(page, 2)
    B.wait_in_page(page, "window.__bench.completedAt !== null", None, 600)
    page.wait_for_timeout(3000)
    labmod.run_cell(page, 3)
    labmod.wait_cell_done(page, 3)
    return str(labmod.cell(page, 3).locator(".jp-OutputArea-output").inner_text())


def measure(reps: int) -> dict[str, Any]:
    names = ["before", "full_plain", "no_wrapper", "after"]
    tasks: dict[str, list[list[float]]] = {n: [] for n in names}
    cells = ["%load_ext agentcell", B.SETUP.format(base_url="http://127.0.0.1:9", tokens=50_000), B.STREAM_CELL,
             VARIANTS_CELL, "pass"]
    with B.lab_page("twin.ipynb", cells, timeout_ms=120_000) as page:
        sizes = finished_run(page)
        cdp = page.context.new_cdp_session(page)
        for _ in range(reps):
            for name in names:
                page.evaluate(B.SET_SOURCE, [4, "update_display(EMPTY, raw=True, display_id=w.static_display_id)"])
                labmod.run_cell(page, 4)
                page.wait_for_timeout(1500)
                page.evaluate(B.SET_SOURCE, [4, f"update_display(V[{name!r}], metadata=md, raw=True, "
                                                "display_id=w.static_display_id)"])
                cdp.send("Tracing.start", {"categories": B.TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})
                page.wait_for_timeout(300)
                labmod.run_cell(page, 4)
                page.wait_for_timeout(2500)
                tasks[name].append([round(t, 1) for t in main_thread_tasks(B.read_trace(cdp), 8.0)])
                print(name, tasks[name][-1], flush=True)
    longest = {n: sorted(r[0] if r else 0.0 for r in rows) for n, rows in tasks.items()}
    return {"sizes_html_plain": sizes, "tasks_over_8ms": tasks, "longest_sorted": longest,
            "longest_median_ms": {n: _common.median(v) for n, v in longest.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=6)
    args = parser.parse_args()
    machine = _common.Machine()
    payload: dict[str, Any] = {"benchmark": "twin_update", "command": " ".join(["python", *sys.argv]),
                               **measure(args.reps)}
    payload["machine"] = machine.facts()
    path = _common.write_results("twin_update", payload)
    for name, values in payload["longest_sorted"].items():
        print(f"{name:>11}: longest task median {payload['longest_median_ms'][name]:.1f} ms, all {values}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
