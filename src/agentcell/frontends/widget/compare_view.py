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
    """The boxes of a comparison: a header with Stop all, the columns, the table (filled at the end).

    Its saved output (below the boxes) holds the table and every model's static transcript, published again
    at cell boundaries like a run's static twin (`saved_outputs.py`), so headless runners keep it too.
    """

    def __init__(self, columns: Mapping[str, AgentWidget | str], *, on_stop_all: Callable[[], None]) -> None:
        import ipywidgets as w  # type: ignore[import-untyped]

        self.columns = dict(columns)
        self.finished = False
        self._table_html = ""

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

        from IPython import get_ipython
        from IPython.display import display

        from .saved_outputs import saved_outputs

        display(self.box)  # type: ignore[no-untyped-call]
        self._static_id = f"agentcell-compare-{uuid.uuid4().hex}"
        data, metadata = self.static_bundle()
        display(data, raw=True, metadata=metadata, display_id=self._static_id)  # type: ignore[no-untyped-call]
        keeper = saved_outputs(get_ipython())
        if keeper is not None:
            keeper.track(self)

    def static_bundle(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The saved output: the table (once every model ended) and each model's transcript so far."""
        parts = [f"<div class='ac-head'><strong>comparing {len(self.columns)} models</strong>"
                 f"{'' if self.finished else ' · <em>still running</em>'}</div>", self._table_html]
        texts = []
        for name, view in self.columns.items():
            if not isinstance(view, AgentWidget):
                parts.append(f"<p><strong>{html.escape(name)}</strong>: {html.escape(view)}</p>")
                texts.append(f"{name}: {view}")
                continue
            data, _ = view.static_bundle(so_far=True)
            parts.append(f"<h4>{html.escape(name)}</h4>{data['text/html']}")
            texts.append(f"== {name} ==\n{data['text/plain']}")
        status = "completed" if self.finished else "running"
        return ({"text/html": f'<div class="agentcell-static" data-status="{status}">{"".join(parts)}</div>',
                 "text/plain": "\n\n".join(texts)}, {})

    def republish(self) -> bool:
        """Publish the saved output again under the cell running now; `True` once it was final."""
        self._publish()
        return self.finished

    def _publish(self) -> None:
        if self._static_id is None:
            return
        from IPython.display import update_display

        data, metadata = self.static_bundle()
        try:
            update_display(data, raw=True, metadata=metadata,  # type: ignore[no-untyped-call]
                           display_id=self._static_id)
        except Exception:  # no display publisher (plain Python): the boxes already show the end
            return

    def finish(self, results: Mapping[str, RunResult], latency: Mapping[str, float]) -> None:
        """Every model ended: fill the table, disable Stop all, put the table in the saved output."""
        self._table_html = compare_table(results, latency)
        self.table.value = self._table_html
        self.stop_all.disabled = True
        self.finished = True
        self._publish()
