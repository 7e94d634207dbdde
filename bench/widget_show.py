"""What JupyterLab spends creating and showing a widget: a `%%agent` run's against its own floor.

Run: `python bench/widget_show.py [--reps 5]` (about 8 minutes; `--only NAME...` runs some variants).
Writes `bench/results/widget_show.json` (`--out NAME`: `bench/results/NAME.json`).

At a run's start JupyterLab handles two kernel messages: the one creating the widget's model (ipywidgets
resolving the model class, anywidget importing the view's module and inserting its stylesheet) and the one
displaying it (the output area, the view's first render); when both arrive in one read of the websocket they
are handled in one task. This measures that start, traced, in a fresh page each time (the first widget of a
page pays for loading the widget libraries, as the first run of a notebook does), then once more on the same
page (the second widget), for:

* `agentcell` — a `%%agent` cell on a scripted model answering "Hello." (the view, its static twin, the run);
* `anywidget` — a minimal anywidget (`_esm` a one-line `render`, no stylesheet), displayed by a plain cell;
* `agentcell_warmed` — the same `%%agent` cell after a setup that created and closed an `AgentWidget` (`WARM`):
  whether warming the front end at `%load_ext` would take the first run's start costs (session 16: no);
* `slider` — an `ipywidgets.IntSlider()`, displayed by a plain cell.

Per show: the longest main-thread task in the 3 s after the cell is run, and every task over 20 ms. The
variants take turns (fresh pages interleaved); traced times run higher than untraced ones.
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

SETUP = '''
import anywidget, ipywidgets
from pydantic_ai.models.function import FunctionModel

class Minimal(anywidget.AnyWidget):
    _esm = "export default { render({ el }) { el.textContent = 'hello'; } }"

async def _hello(messages, info):
    yield "Hello."

hello_model = FunctionModel(stream_function=_hello)
'''

WARM = "\nfrom agentcell.frontends.widget.widget import AgentWidget\nAgentWidget().close()\n"
"""A widget created and closed at once: the front end loads the widget libraries and the view's module."""

CELLS = {
    "agentcell": "%%agent -m hello_model\nSay hello.\n[[answer]]",
    "agentcell_warmed": "%%agent -m hello_model\nSay hello.\n[[answer]]",
    "anywidget": "Minimal()",
    "slider": "ipywidgets.IntSlider()",
}


def show_once(page: Any, cdp: Any, index: int, anatomy: list[dict[str, Any]]) -> list[float]:
    """Run cell `index` under a trace: its main-thread tasks over 20 ms (the longest first; at least the
    longest task over 8 ms, 0.0 when there was none). Tasks over 40 ms go to `anatomy`, broken down."""
    cdp.send("Tracing.start", {"categories": B.TRACE_CATEGORIES, "transferMode": "ReturnAsStream"})
    page.wait_for_timeout(300)
    labmod.run_cell(page, index)
    page.wait_for_timeout(3000)
    found = B.long_task_anatomy(B.read_trace(cdp), 8.0)
    anatomy += [t for t in found if t["ms"] > 40.0]
    tasks = sorted((t["ms"] for t in found), reverse=True)
    return [tasks[0], *[t for t in tasks[1:] if t > 20.0]] if tasks else [0.0]


def measure(reps: int, only: list[str]) -> dict[str, Any]:
    out: dict[str, dict[str, list[list[float]]]] = {n: {"first": [], "second": []} for n in only}
    anatomy: dict[str, list[dict[str, Any]]] = {n: [] for n in only}
    for rep in range(reps):
        names = list(only)
        names = names[rep % len(names):] + names[:rep % len(names)]
        for name in names:
            setup = SETUP + (WARM if name.endswith("_warmed") else "")
            cells = ["%load_ext agentcell", setup, CELLS[name], CELLS[name]]
            with B.lab_page(f"show-{name}.ipynb", cells, timeout_ms=60_000) as page:
                for i in (0, 1):
                    labmod.run_cell(page, i)
                    labmod.wait_cell_done(page, i)
                page.wait_for_timeout(1000)
                cdp = page.context.new_cdp_session(page)
                for which, index in (("first", 2), ("second", 3)):
                    out[name][which].append(show_once(page, cdp, index, anatomy[name]))
            print(f"{name}: first {out[name]['first'][-1]}, second {out[name]['second'][-1]}", flush=True)
    summary = {n: {w: _common.median(r[0] for r in rows) for w, rows in per.items()} for n, per in out.items()}
    return {"tasks_over_20ms": out, "longest_median_ms": summary, "anatomy_over_40ms": anatomy}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one fresh page per variant")
    parser.add_argument("--only", nargs="+", choices=list(CELLS), default=list(CELLS), help="variants to run")
    parser.add_argument("--out", default="widget_show", help="results file name (bench/results/NAME.json)")
    args = parser.parse_args()
    machine = _common.Machine()
    payload: dict[str, Any] = {"benchmark": "widget_show", "command": " ".join(["python", *sys.argv]),
                               **measure(1 if args.quick else args.reps, args.only)}
    payload["machine"] = machine.facts()
    path = _common.write_results(args.out, payload)
    rows = [[n, s["first"], s["second"]] for n, s in payload["longest_median_ms"].items()]
    print(_common.table(rows, ["variant", "longest task, first widget (median ms)", "second widget"]))
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
