"""The batch widget: progress, a live table of rows, and one row's full run view on a click.

Python owns the state. Three coarse traits (`status`, `columns`, `final`) and batched custom
messages: `{"kind": "rows", "rows": [...], "progress": {...}}` carries the rows that changed since the
last message, flushed at most `1 / flush_interval` times a second (10 by default) whatever the row
rate, so a 64-row-wide batch of fast rows stays far under the 30 messages/s budget. A view that opens
late asks for a snapshot. Clicking a row asks for that row's events (`{"kind": "row", "index": i,
"msg": {"kind": "snapshot_request"}}`): the same single-run view (`js/src/view.js`) renders them, and
while the row runs its new events ride along in the same flushes. Stop stops the whole batch; the
row view's own Stop stops that row only.

Messages may arrive on a kernel subshell thread: Stop is thread-safe (`Batch.cancel`), everything
else is marshalled onto the batch's loop.
"""

from __future__ import annotations

import asyncio
import html
import pathlib
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

import anywidget
import traitlets
from pydantic_core import to_jsonable_python

from ...batch import Batch
from ...batch.inputs import safe_repr
from ...batch.regress import compare
from ...batch.results import GROUPS, RowResult
from ...batch.summary import summarize, summary_line
from ...engine.eventlog import EventLog
from ...errors import AgentcellError
from ...formats.jsonsafe import scrub, scrub_text
from ...loops import running_loop
from ...render.html import NO_MATH
from .protocol import log_of, wire_events
from .viewers import note_view

STATIC = pathlib.Path(__file__).parents[2] / "static"
"""The built bundles (`npm run build` writes them; the wheel ships them)."""
_FALLBACK_ESM = """
export default { render({ model, el }) {
  el.textContent = "agentcell: the batch bundle is missing (run `npm run build`). Status: " + model.get("status");
} };
"""
IDLE_TICK_S = 1.0
"""While rows run but none changed, progress (elapsed, rate, ETA) is sent this often."""
PREVIEW_CHARS = 200
"""Cell values longer than this are cut in the live table (the results keep them whole)."""


def _asset(name: str) -> pathlib.Path | str:
    path = STATIC / name
    return path if path.exists() else (_FALLBACK_ESM if name.endswith(".js") else "")


def row_json(row: RowResult, expected: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One table row for the browser: status, slot values (cut), error, tokens, cost; when the batch is scored,
    its pass mark, its scores by column (`"error"` where an evaluator failed) and its expected values."""
    usage = row.usage
    out = {
        "i": row.index,
        "status": row.status,
        "input": _preview(next(iter(row.input.values()), "") if row.input else ""),
        "input_name": str(next(iter(row.input), "")) if row.input else "",
        "values": {k: _preview(v) for k, v in row.results.items()},
        "error": None if row.error is None else scrub_text(row.error)[0],
        "tokens": usage.input_tokens + usage.output_tokens,
        "cost": usage.cost,
        "resumed": row.resumed,
        "duration": None if row.duration is None else round(row.duration, 2),
    }
    if expected:
        out["expected"] = {k: _preview(v) for k, v in expected.items()}
    if row.scores:
        out["passed"] = row.passed
        out["scores"] = {s.column: _preview(s.value) if s.error is None else "error" for s in row.scores}
        problems = [f"{s.column}: {s.error}" for s in row.scores if s.error is not None]
        reasons = [f"{s.column}: {s.reason}" for s in row.scores if s.reason and s.error is None]
        if problems or reasons:
            out["score_notes"] = [scrub_text(t)[0] for t in [*problems, *reasons]][:8]
    return out


def summary_json(batch: Batch) -> dict[str, Any] | None:
    """The batch's score summary for the browser (`None`: the batch is not scored)."""
    if batch.scorer is None:
        return None
    numbers = summarize(batch.rows)
    out: dict[str, Any] = {"line": summary_line(numbers), "passed": numbers["passed"], "scored": numbers["scored"],
                           "pass_rate": numbers["pass_rate"], "failures": len(numbers["failures"]),
                           "means": numbers["mean"]}
    if batch.baseline is not None:
        out["baseline"] = compare(batch.rows, batch.baseline, batch.slots).line
    return out


def changes_json(batch: Batch, *, limit: int = 200) -> list[dict[str, Any]]:
    """The rows that changed against the baseline, both answers side by side (the first `limit`)."""
    result = batch.result
    if result is None or result.comparison is None:
        return []
    return [{k: _preview(v) for k, v in record.items()} for record in result.comparison.to_records()[:limit]]


def _preview(value: Any) -> Any:
    """A cell of the live table: JSON-ready, valid UTF-8, cut. A row's value is the user's own, so anything that
    cannot be shown as JSON (a cycle, thousands of levels deep, bytes that are not UTF-8, a raising `repr`)
    is shown as its `repr` or its type rather than stopping the view."""
    try:
        value = to_jsonable_python(value, fallback=safe_repr)
    except Exception:  # whatever the value raises, the table shows something
        value = safe_repr(value)
    value = scrub(value)[0]  # lone surrogates: a message that is not UTF-8 cannot be sent
    if isinstance(value, str):
        return value if len(value) <= PREVIEW_CHARS else value[: PREVIEW_CHARS - 1] + "…"
    if isinstance(value, dict | list):
        import json

        text = json.dumps(value, ensure_ascii=False)
        return value if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"
    return value


class BatchWidget(anywidget.AnyWidget):
    """Shows one batch live; `Batch.watch` feeds it."""

    _esm = _asset("batch.js")
    _css = _asset("batch.css")

    status = traitlets.Unicode("running").tag(sync=True)
    """running | completed | stopped"""
    columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The slot columns of the table, in template order."""
    final = traitlets.Dict().tag(sync=True)
    """Once the batch ended: `{"rows": [...], "progress": {...}}`, so a saved notebook's view shows the table."""
    hint = traitlets.Unicode("").tag(sync=True)
    score_columns = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The score columns of a scored batch (`<slot>:<evaluator>`), in order; empty when it is not scored."""

    def __init__(self, batch: Batch, *, flush_interval: float = 0.1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.batch = batch
        self.flush_interval = flush_interval
        self.messages_sent = 0
        """Custom messages sent so far (benchmarks and tests read it)."""
        self.columns = list(batch.slots)
        self.score_columns = [] if batch.scorer is None else batch.scorer.columns
        self.hint = "engine: dask" if batch.engine == "dask" else ""
        self._dirty: set[int] = set()
        self._open: dict[int, int] = {}
        """Rows whose view is open → how many of their events were sent."""
        self._t0 = time.monotonic()
        self._finished_at_start = sum(r.finished for r in batch.rows)
        self._flush_handle: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._loop = batch.loop
        self.display_id: str | None = None
        self.retried: list[Callable[[Batch], None]] = []  # get the batch a retry starts (a comparison adopts it)
        batch.watch(self._on_row)
        batch.task.add_done_callback(lambda _t: self._ended())
        self.on_msg(self._on_frontend_msg)

    # ---- progress --------------------------------------------------------------------------
    def progress(self) -> dict[str, Any]:
        """Counts per group, tokens, cost, rows per minute and the estimated time left."""
        counts = dict.fromkeys(("done", "failed", "stopped", "running", "pending", "not_started"), 0)
        for row in self.batch.rows:
            counts[GROUPS[row.status]] += 1
        usage = self.batch.usage
        elapsed = time.monotonic() - self._t0
        finished_here = counts["done"] + counts["failed"] + counts["stopped"] - self._finished_at_start
        rate = finished_here / elapsed * 60 if elapsed > 0 and finished_here > 0 else None
        left = counts["pending"] + counts["running"]
        eta = left / rate * 60 if rate and left else (0.0 if not left else None)
        return {
            **counts,
            "total": len(self.batch.rows),
            "tokens": usage.input_tokens + usage.output_tokens,
            "cost": usage.cost,
            "rows_per_min": None if rate is None else round(rate),
            "eta_s": None if eta is None else round(eta, 1),
            "elapsed_s": round(elapsed, 1),
            "paused_s": round(self.batch.throttle.paused_for, 1),
            "pause_note": self.batch.throttle.note,
            "reason": self.batch.reason,
            "summary": summary_json(self.batch),
        }

    # ---- feeding ---------------------------------------------------------------------------
    def _on_row(self, row: RowResult) -> None:
        self._dirty.add(row.index)
        self._schedule()

    def _schedule(self) -> None:
        if self._flush_handle is not None:
            return
        wait = max(0.0, self._last_flush + self.flush_interval - time.monotonic())
        self._flush_handle = self._loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Send the rows that changed (and the open rows' new events) as one message."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        rows = [self._row_json(self.batch.rows[i]) for i in sorted(self._dirty)]
        self._dirty.clear()
        opened = self._open_rows_delta()
        quiet = time.monotonic() - self._last_flush < IDLE_TICK_S
        if not rows and not opened and quiet and not self.batch.done:
            self._schedule()  # nothing changed: only the clock moves, once a second is enough
            return
        message: dict[str, Any] = {"kind": "rows", "rows": rows, "progress": self.progress()}
        if opened:
            message["open"] = opened
        self._last_flush = time.monotonic()
        self.messages_sent += 1
        self.send(message)
        if not self.batch.done:
            self._schedule()  # rows are running (here or on Dask): keep the clock, rate and ETA moving

    def _open_rows_delta(self) -> list[dict[str, Any]]:
        """New events of the rows whose view is open: read from each row's run log with a cursor, converted now."""
        out = []
        for index, sent in list(self._open.items()):
            run = self.batch.runs.get(index)
            log: EventLog | None
            if run is not None:
                log, shift = run.log, run.log.t0 - self._t0
            else:  # ended since the last flush: its journal has its events, if it was kept
                events = self.batch.events_of(index)
                log, shift = (None, 0.0) if events is None else (log_of(events), self._now())
            if log is None or len(log.events) <= sent:
                if run is None:
                    del self._open[index]  # ended and fully sent
                continue
            out.append({"index": index, "status": self.batch.rows[index].status,
                        "events": wire_events(log, sent, shift=shift)})
            self._open[index] = len(log.events)
            if run is None:
                del self._open[index]
        return out

    def _ended(self) -> None:
        self.flush()
        result = self.batch.result
        rows = [self._row_json(r) for r in self.batch.rows]
        progress = self.progress()
        self.final = {"rows": rows, "progress": progress, "summary": progress["summary"],
                      "changes": changes_json(self.batch)}
        self.status = result.status if result is not None else "stopped"
        self._update_static()

    def _row_json(self, row: RowResult) -> dict[str, Any]:
        scorer = self.batch.scorer
        return row_json(row, scorer.expected(row.input) if scorer is not None and scorer.expect else None)

    def _now(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    # ---- the browser -----------------------------------------------------------------------
    def _on_frontend_msg(self, _widget: object, content: Mapping[str, Any], _buffers: list[bytes]) -> None:
        note_view()
        if content.get("kind") == "stop":
            self.batch.cancel()  # thread-safe
            return
        if running_loop() is not self._loop:
            self._loop.call_soon_threadsafe(self._dispatch, dict(content))
        else:
            self._dispatch(dict(content))

    def _dispatch(self, content: dict[str, Any]) -> None:
        kind = content.get("kind")
        if kind == "snapshot_request":
            self.flush()
            self.messages_sent += 1
            self.send({"kind": "snapshot", "rows": [self._row_json(r) for r in self.batch.rows],
                       "progress": self.progress()})
        elif kind == "row":
            self._row_message(content)
        elif kind == "retry":
            self._retry()

    def _retry(self) -> None:
        """"Retry failed rows": a new batch over the same rows runs only those that did not complete
        (`Batch.retry`), shown in this widget from now on (`.batch` is the new one)."""
        try:
            batch = self.batch.retry()
        except AgentcellError as exc:
            self.hint = str(exc)
            return
        self.batch = batch
        self._t0 = time.monotonic()
        self._finished_at_start = sum(r.finished for r in batch.rows)
        self._dirty.update(range(len(batch.rows)))
        self.status = "running"
        batch.watch(self._on_row)
        batch.task.add_done_callback(lambda _t: self._ended())
        self._schedule()
        for fn in self.retried:
            fn(batch)

    def _row_message(self, content: dict[str, Any]) -> None:
        index, msg = content.get("index"), content.get("msg") or {}
        if not isinstance(index, int) or not 0 <= index < len(self.batch.rows):
            return
        if msg.get("kind") == "stop":
            self.batch.cancel_row(index)
        elif msg.get("kind") == "snapshot_request":
            t = self._now()
            run = self.batch.runs.get(index)
            events = None if run is not None else self.batch.events_of(index)
            log = run.log if run is not None else None if events is None else log_of(events)
            wire = [] if log is None else wire_events(log, shift=log.t0 - self._t0 if run is not None else t)
            if run is not None:
                self._open[index] = len(run.log.events)
            missing = None if log is not None else _why_missing(self.batch.rows[index])
            self.messages_sent += 1
            self.send({"kind": "row", "index": index, "status": self.batch.rows[index].status,
                       "msg": {"kind": "snapshot", "events": wire, "t": t}, "missing": missing})
        elif msg.get("kind") == "close":
            self._open.pop(index, None)

    # ---- display ---------------------------------------------------------------------------
    def show(self) -> None:
        """Display the live view, then a static output that receives the results table when the batch ends."""
        from IPython import get_ipython
        from IPython.display import display

        from .saved_outputs import saved_outputs

        # Unique for the kernel's life: an address (`id`) is reused once a widget is freed, and an update to
        # a reused id would rewrite the earlier cell's saved table too (JupyterLab routes by display id).
        self.display_id = f"agentcell-batch-{uuid.uuid4().hex}"
        display(self)  # type: ignore[no-untyped-call]
        display({"text/html": '<div class="agentcell-static" data-status="running"></div>', "text/plain": ""},
                raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
        keeper = saved_outputs(get_ipython())
        if keeper is not None and not self.batch.done:
            keeper.track(self)

    def republish(self) -> bool:
        """Publish the saved table again under the cell running now (see `saved_outputs.py`); `True` once final."""
        self._update_static()
        return self.batch.done

    def _update_static(self) -> None:
        from .saved_outputs import update_saved

        update_saved(self.display_id, lambda: static_bundle(self.batch), log=self.log, what="batch output")

    def __repr__(self) -> str:
        return f"<BatchWidget status={self.status!r} rows={len(self.batch.rows)}>"


def _why_missing(row: RowResult) -> str:
    if row.run_id is None:
        return "this row never started"
    return "this row's transcript was not kept (the journal is off); its values are in the table"


def static_bundle(batch: Batch, *, limit: int = 200) -> dict[str, str]:
    """The results as escaped HTML and plain text, for a saved notebook (first `limit` rows)."""
    counts = ", ".join(f"{n} {s}" for s, n in sorted(Counter(r.status for r in batch.rows).items()))
    state = batch.result.status if batch.result is not None else "running (so far)"
    head = f"agentcell batch: {len(batch.rows)} rows ({counts}); {state}"
    scored = summary_json(batch)
    if scored is not None:
        head += f"; {scored['line']}"
        if "baseline" in scored:
            head += f"; against the baseline: {scored['baseline']}"
    cols = ["#", *batch.slots, "status", "error", *(["passed"] if scored is not None else [])]
    lines = [head]
    cells = []
    for row in batch.rows[:limit]:
        values = [str(row.index), *(str(_preview(row.results.get(s, ""))) for s in batch.slots), row.status,
                  scrub_text(row.error or "")[0]]
        if scored is not None:
            values.append({True: "✓", False: "✗", None: ""}[row.passed])
        lines.append(" | ".join(values))
        cells.append("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in values) + "</tr>")
    more = f"<p>… {len(batch.rows) - limit} more rows</p>" if len(batch.rows) > limit else ""
    table = ("<table><thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr></thead><tbody>"
             + "".join(cells) + "</tbody></table>")
    status = batch.result.status if batch.result is not None else "running"
    opening = (f'<div class="agentcell-static" data-status="{status}"><div class="{NO_MATH}">'
               f'<p class="ac-head">{html.escape(head)}</p>')
    return {"text/html": f"{opening}{table}{more}</div></div>",
            "text/plain": "\n".join(lines)}
