"""The comparison view: one column per model (each a live run widget with its own Stop), one Stop for all,
and, once every model ended, a table of each slot's value per model (differences marked) and usage.

Built from ipywidgets' boxes around the run widgets, so each column is exactly the single-run view (status,
streamed answer, rounds, tool calls, tokens, cost, elapsed time, Stop). The table is an escaped HTML value;
it is also put in a plain output below the boxes, so a saved notebook shows it without a kernel.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping
from typing import Any

from ...result import RunResult
from .widget import AgentWidget

TABLE_CSS = (
    "<style>.agentcell-compare-table{border-collapse:collapse;margin:.4em 0}"
    ".agentcell-compare-table th,.agentcell-compare-table td{border:1px solid #8a8a8a;padding:.2em .5em;"
    "text-align:left;vertical-align:top}"
    ".agentcell-compare-table tr[data-differs=true] td{background:#fff3cd;color:#1a1a1a}</style>"
)


def compare_table(results: Mapping[str, RunResult], latency: Mapping[str, float]) -> str:
    """Each slot's value per model (a row whose values differ is marked), then status, usage and latency."""
    e = html.escape
    models = list(results)
    slots: list[str] = []
    for result in results.values():
        slots.extend(s for s in result.results if s not in slots)
    head = "".join(f"<th scope='col'>{e(m)}</th>" for m in models)
    rows: list[str] = []
    for slot in slots:
        values = [_shown(results[m].results.get(slot)) for m in models]
        differs = len(set(values)) > 1
        mark = " <strong>(differs)</strong>" if differs else ""
        cells = "".join(f"<td>{e(v)}</td>" for v in values)
        rows.append(f"<tr data-differs='{str(differs).lower()}'><th scope='row'>[[{e(slot)}]]{mark}</th>{cells}</tr>")

    def line(label: str, fn: Callable[[str], str]) -> str:
        return f"<tr><th scope='row'>{label}</th>{''.join(f'<td>{e(fn(m))}</td>' for m in models)}</tr>"

    rows.append(line("status", lambda m: results[m].status + (f": {results[m].error}" if results[m].error else "")))
    rows.append(line("requests", lambda m: str(results[m].usage.requests)))
    rows.append(line("tool calls", lambda m: str(results[m].usage.tool_calls)))
    rows.append(line("tokens in / out", lambda m: f"{results[m].usage.input_tokens} / {results[m].usage.output_tokens}"
                     ))
    rows.append(line("cost", lambda m: _cost(results[m].usage.cost)))
    rows.append(line("latency", lambda m: f"{latency.get(m, 0.0):.2f} s"))
    return (f"{TABLE_CSS}<table class='agentcell-compare-table'><thead><tr><th scope='col'>slot</th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)


class CompareView:
    """The boxes of a comparison: a header with Stop all, the columns, the table (filled at the end)."""

    def __init__(self, columns: Mapping[str, AgentWidget | str], *, on_stop_all: Callable[[], None]) -> None:
        import ipywidgets as w  # type: ignore[import-untyped]

        self.stop_all = w.Button(description="Stop all", tooltip="Stop every model's run",
                                 layout=w.Layout(width="auto"))
        self.stop_all.add_class("agentcell-compare-stop-all")
        self.stop_all.on_click(lambda _button: on_stop_all())
        title = w.HTML(f"<strong>comparing {len(columns)} models</strong>")
        boxes = []
        for name, view in columns.items():
            heading = w.HTML(f"<strong>{html.escape(name)}</strong>")
            body = view if isinstance(view, AgentWidget) else w.HTML(f"<p>{html.escape(view)}</p>")
            boxes.append(w.VBox([heading, body], layout=w.Layout(flex="1 1 0", min_width="20em", margin="0 4px")))
        self.table = w.HTML("")
        self.box = w.VBox([w.HBox([title, self.stop_all]),
                           w.HBox(boxes, layout=w.Layout(flex_flow="row wrap", align_items="stretch")), self.table])
        self._static_id: str | None = None

    def show(self) -> None:
        """Display the boxes, then an output the table goes into at the end (kept by a saved notebook)."""
        import uuid

        from IPython.display import display

        display(self.box)  # type: ignore[no-untyped-call]
        self._static_id = f"agentcell-compare-{uuid.uuid4().hex}"
        display({"text/plain": ""}, raw=True, display_id=self._static_id)  # type: ignore[no-untyped-call]

    def finish(self, results: Mapping[str, RunResult], latency: Mapping[str, float]) -> None:
        """Every model ended: fill the table, disable Stop all, put the table in the saved output."""
        table = compare_table(results, latency)
        self.table.value = table
        self.stop_all.disabled = True
        if self._static_id is not None:
            from IPython.display import update_display

            text = "\n".join(f"{m}: {r.status}, {r.answer!r}" for m, r in results.items())
            update_display({"text/html": table, "text/plain": text}, raw=True,  # type: ignore[no-untyped-call]
                           display_id=self._static_id)
