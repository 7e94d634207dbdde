"""marimo: a run belongs to the running cell, and its transcript is kept under the live view.

marimo re-runs cells on every upstream change, so a run started in a cell replaces the runs of that
cell's previous execution. marimo keeps only a model id for an anywidget in its saved session, so a
run started in a marimo cell also gets its transcript appended under the live view when it ends (as a
closed `<details>`), which the saved session and a reopened notebook keep. This reads marimo's runtime
(`marimo._runtime`), a private API checked against marimo 0.25; where it differs, nothing is appended
and nothing breaks.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from .base import Place

if TYPE_CHECKING:
    from .registry import LiveRun
    from .widget.widget import AgentWidget

_log = logging.getLogger("agentcell")


class Marimo:
    """The front end of a marimo notebook (edit mode, `marimo run`, a script run with a loop)."""

    name = "marimo"

    def here(self) -> Place | None:
        """The running marimo cell, or `None` outside one."""
        execution = marimo_execution()
        if execution is None:
            return None
        cell_id, context = execution
        return Place(front=self.name, key=f"marimo:{cell_id}", generation=context, cell=cell_id)

    def display(self, view: AgentWidget) -> None:
        """Append the live view to the running cell's output (marimo's `mo.output.append`)."""
        import marimo as mo

        mo.output.append(view)

    def keep(self, run: LiveRun, view: AgentWidget, place: Place) -> None:
        """When the run ends, append its static transcript under the live view of the cell it started in."""
        if place.cell is not None:
            keep_transcript_in_marimo(run, view, place.cell)


MARIMO = Marimo()


def marimo_execution() -> tuple[str, object] | None:
    """The running marimo cell's id and its execution context, or `None` outside a marimo cell."""
    if "marimo" not in sys.modules:  # never import marimo just to learn that it is not running
        return None
    try:
        from marimo._runtime.context import get_context
        from marimo._runtime.context.types import ContextNotInitializedError
    except ImportError:
        return None
    try:
        execution = get_context().execution_context
    except ContextNotInitializedError:
        return None
    cell_id = getattr(execution, "cell_id", None)
    return (str(cell_id), execution) if cell_id else None


def keep_transcript_in_marimo(handle: LiveRun, widget: AgentWidget, cell_id: str) -> None:
    """When the run ends, append its static transcript under the live view in marimo cell `cell_id`."""
    if handle.task is not None:
        handle.task.add_done_callback(lambda _task: _append_transcript(handle, widget, cell_id))


def _append_transcript(handle: LiveRun, widget: AgentWidget, cell_id: str) -> None:
    if getattr(handle, "superseded", False):
        return  # the cell was re-run: its output belongs to the newer run
    try:
        _write_marimo_output(widget, cell_id)
    except Exception as exc:  # a done-callback must not raise; the live view already shows the end
        _log.debug("agentcell: could not append the transcript to marimo cell %s: %s", cell_id, exc)


def _write_marimo_output(widget: AgentWidget, cell_id: str) -> None:
    import marimo as mo
    from marimo._runtime.context import get_context
    from marimo._runtime.output._output import write_internal

    from ..render.output import static_transcript

    cells: Any = get_context().graph.cells  # keyed by marimo's CellId_t, a str NewType
    cell = cells.get(cell_id)
    output = getattr(cell, "output", None)
    # Only a cell whose output is this run's view (the widget, or mo.ui.anywidget around it); a layout
    # the user built, or a cell re-run without show(), is left as it is.
    if output is not widget and getattr(output, "widget", None) is not widget:
        return
    saved = static_transcript(widget)
    summary = f"Transcript ({widget.status}): kept when this notebook is saved or exported"
    write: Any = write_internal
    write(cell_id, mo.vstack([output, mo.Html(saved.collapsed(summary))]))
