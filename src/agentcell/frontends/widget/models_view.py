"""The models' scores side by side: a scored batch run on several models (`%%agent --models A,B --over rows
--expect ...`, or `agentcell.compare(..., over=rows, expect=...)` shown with `ModelsWidget(compared).show()`).

Above the models' own batch widgets (progress, rows, one row's run on a click) this view shows what a model
choice needs: the model-selection table (per model: pass rate, mean score per evaluator, cost, median latency,
failed runs; `batch/by_model.py` makes the numbers) and each row's pass mark and answer per model side by side,
with its expected value. Python owns the state: one synced trait, `state`, rewritten at most every
`flush_interval` seconds (0.5) while rows finish, and once more when every model's batch has ended. A saved notebook
(nbconvert, papermill, a notebook opened without a kernel) gets the same table as escaped HTML and text in a
static output updated under its display id (`static_bundle`).
"""

from __future__ import annotations

import asyncio
import html
import uuid
from collections.abc import Mapping
from typing import Any

import anywidget
import traitlets

from ...batch import Batch
from ...batch.by_model import evaluator_columns, selection, selection_cells
from ...batch.compare_rows import ComparedBatch
from ...batch.results import RowResult
from ...formats.jsonsafe import scrub_text
from ...render.html import NO_MATH
from .batch_view import _asset, _preview, row_json

ROW_LIMIT = 200
"""Rows shown side by side (the results keep them all)."""
MARKS = {True: "✓", False: "✗", None: ""}


def models_state(compared: ComparedBatch, *, limit: int = ROW_LIMIT) -> dict[str, Any]:
    """The view's state: `models`, `slots`, `table` (one row per model, `by_model.selection`), `selection` (its
    cells as text: `{header, body}`, what the saved output shows too), `columns` (the score columns), `rows`
    (the first `limit`: `{i, input, input_name, expected?, cells: {model: row}}`), `total` and `status`
    (`running`, then `completed` or `stopped`)."""
    batches = compared.batches
    first = next(iter(batches.values()))
    table = selection({name: batch.rows for name, batch in batches.items()})
    rows = []
    for i, base in enumerate(first.rows[:limit]):
        scorer = first.scorer
        expected = scorer.expected(base.input) if scorer is not None and scorer.expect else None
        line: dict[str, Any] = {"i": i, "input": _preview(next(iter(base.input.values()), "") if base.input else ""),
                                "input_name": str(next(iter(base.input), "")) if base.input else "",
                                "cells": {name: _cell(batch.rows[i]) for name, batch in batches.items()
                                          if i < len(batch.rows)}}
        if expected:
            line["expected"] = {k: _preview(v) for k, v in expected.items()}
        rows.append(line)
    header, body = selection_cells(table)
    return {"models": list(batches), "slots": list(first.slots), "table": [_jsonable_row(r) for r in table],
            "selection": {"header": header, "body": body}, "columns": evaluator_columns(table), "rows": rows,
            "total": len(first.rows), "status": _status(compared)}


CELL_KEYS = ("status", "values", "error", "passed", "scores")
"""What a model's cell of a row needs (its mark and answer); the row's own view is in that model's batch widget."""


def _cell(row: RowResult) -> dict[str, Any]:
    out = row_json(row)
    return {k: out[k] for k in CELL_KEYS if k in out}


def _jsonable_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _preview(v) if k == "model" else v for k, v in row.items()}


def _status(compared: ComparedBatch) -> str:
    if not compared.done:
        return "running"
    results = [b.result for b in compared.batches.values()]
    return "completed" if all(r is not None and r.status == "completed" for r in results) else "stopped"


class ModelsWidget(anywidget.AnyWidget):
    """Shows a scored batch's models side by side; each model's `Batch.watch` feeds it."""

    _esm = _asset("batch.js")
    _css = _asset("batch.css")

    view = traitlets.Unicode("models").tag(sync=True)
    """Which view of the batch bundle renders this widget (js/src/batch.js)."""
    state = traitlets.Dict().tag(sync=True)
    """`models_state(...)`: the model-selection table and the rows side by side."""

    def __init__(self, compared: ComparedBatch, *, flush_interval: float = 0.5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.compared = compared
        self.flush_interval = flush_interval
        self.display_id: str | None = None
        first = next(iter(compared.batches.values()))
        self._loop = first.loop
        self._pending: asyncio.TimerHandle | None = None
        self.state = models_state(compared)
        for batch in compared.batches.values():
            self._follow(batch)
        compared.on_adopt(lambda _model, batch: self._retried(batch))

    def _follow(self, batch: Batch) -> None:
        batch.watch(lambda _row: self._schedule())
        batch.task.add_done_callback(lambda _t: self._ended())

    def _retried(self, batch: Batch) -> None:
        """A model's batch was retried (its widget's "Retry failed rows"): its rows feed the table from now on."""
        self._follow(batch)
        self.flush()

    def _schedule(self) -> None:
        if self._pending is None:
            self._pending = self._loop.call_later(self.flush_interval, self.flush)

    def flush(self) -> None:
        """Send the state as it is now."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        self.state = models_state(self.compared)

    def _ended(self) -> None:
        if not self.compared.done:
            return
        self.flush()
        self._update_static()

    # ---- display ---------------------------------------------------------------------------
    def show(self) -> None:
        """Display the live view, then a static output that receives the table once every model has ended."""
        from IPython import get_ipython
        from IPython.display import display

        from .saved_outputs import saved_outputs

        self.display_id = f"agentcell-models-{uuid.uuid4().hex}"
        display(self)  # type: ignore[no-untyped-call]
        display(static_bundle(self.compared), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
        keeper = saved_outputs(get_ipython())
        if keeper is not None and not self.compared.done:
            keeper.track(self)

    def republish(self) -> bool:
        """Publish the saved table again under the cell running now (see `saved_outputs.py`); `True` once final."""
        self._update_static()
        return self.compared.done

    def _update_static(self) -> None:
        from .saved_outputs import update_saved

        update_saved(self.display_id, lambda: static_bundle(self.compared), log=self.log, what="models' output")

    def __repr__(self) -> str:
        return f"<ModelsWidget models={list(self.compared.models)} status={_status(self.compared)!r}>"


def static_bundle(compared: ComparedBatch, *, limit: int = ROW_LIMIT) -> dict[str, str]:
    """The model-selection table and the rows side by side as escaped HTML and plain text (a saved notebook)."""
    state = models_state(compared, limit=limit)
    status = state["status"]
    head = f"agentcell: {state['total']} rows on {len(state['models'])} models ({', '.join(state['models'])}); " \
           f"{status if status != 'running' else 'running (so far)'}"
    header, body = state["selection"]["header"], state["selection"]["body"]
    lines = [head, " | ".join(header), *(" | ".join(cells) for cells in body)]
    slots = state["slots"]
    scored = any(t["scored"] for t in state["table"]) or status == "running"
    expected = [s for s in slots if any(s in r.get("expected", {}) for r in state["rows"])]
    row_head = ["#", "input", *(f"expected {s}" for s in expected), *state["models"]]
    matrix = []
    for row in state["rows"]:
        cells = [str(row["i"]), _text(row["input"]), *(_text(row.get("expected", {}).get(s)) for s in expected)]
        for model in state["models"]:
            cell = row["cells"].get(model, {})
            mark = MARKS.get(cell.get("passed"), "") if scored else ""
            answer = " · ".join(_text(cell.get("values", {}).get(s)) for s in slots if s in cell.get("values", {}))
            cells.append(f"{mark} {answer}".strip() if cell.get("status") in ("completed", "halted")
                         else f"{mark} {cell.get('status', '')}".strip())
        matrix.append(cells)
    lines += ["", " | ".join(row_head), *(" | ".join(cells) for cells in matrix)]
    more = state["total"] - len(state["rows"])
    if more > 0:
        lines.append(f"… {more} more rows")
    page = (f'<div class="agentcell-static" data-status="{status}"><div class="{NO_MATH}">'
            f'<p class="ac-head">{html.escape(head)}</p>'
            f'<table class="ac-models"><caption>Model selection</caption>{_html_table(header, body)}</table>'
            f'<table class="ac-models-rows">{_html_table(row_head, matrix)}</table>'
            + (f"<p>… {more} more rows</p>" if more > 0 else "") + "</div></div>")
    return {"text/html": page, "text/plain": "\n".join(lines)}


def _html_table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in header)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>" for cells in body)
    return f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody>"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return scrub_text(value)[0].strip()
    import json

    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
