"""Runs started from Python (`show()`): where each comes from, which run it replaces, and marimo's needs.

`%%agent` keeps its runs in the magic's registry, keyed by the front end's cell id. Runs started
with `show()` live in `PYTHON_RUNS` (there is no shell object in marimo or a script to hang them
on), and their *place* decides which earlier run a new one replaces:

* `key=` given: that key (a string), or the place of the earlier run whose widget is passed;
* in marimo: the running cell (marimo re-runs cells on every upstream change, so this matters);
* in a Jupyter kernel: the cell id the front end sent with the request (JupyterLab, Notebook 7,
  VS Code; nbclient too);
* otherwise (plain Python, terminal IPython): a place of its own — the run replaces nothing, and only
  `show(key=its_widget)` replaces it.

One execution of a cell may call `show()` several times: those runs share a *generation* and coexist;
the next execution replaces them all (`RunRegistry.add`).

marimo keeps only a model id for an anywidget in its saved session, so a run started in a marimo cell
also gets its transcript appended under the live view when it ends (as a closed `<details>`), which
the saved session and a reopened notebook keep. This reads marimo's runtime (`marimo._runtime`), a
private API checked against marimo 0.25; where it differs, nothing is appended and nothing breaks.
"""

from __future__ import annotations

import logging
import sys
import uuid
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .notebook import current_parent
from .registry import LiveRun, RunRegistry

if TYPE_CHECKING:
    from .widget import AgentWidget

_log = logging.getLogger("agentcell")

PYTHON_RUNS = RunRegistry()
"""Every run started with `show()` in this process, until it ends (`stop_all()` stops them)."""

_places: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""A `show()` widget → the place its run was started from (so `key=widget` replaces that place)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """Where a `show()` call comes from."""

    front: Literal["marimo", "jupyter", "python"]
    """The front end running the code."""
    key: str
    """The registry place: a newer run from the same place replaces the older."""
    generation: object = None
    """This execution of the cell (runs of one execution coexist); `None` for `key=`: always replace."""
    marimo_cell: str | None = None
    """The marimo cell id, when the run was started in one."""


def place_of_call(key: str | AgentWidget | None = None) -> Place:
    """The place of a `show()` call made now (see the module docstring for the order)."""
    marimo = marimo_execution()
    front: Literal["marimo", "jupyter", "python"] = "marimo" if marimo is not None else "python"
    jupyter = jupyter_execution() if marimo is None else None
    if jupyter is not None:
        front = "jupyter"
    cell = marimo[0] if marimo is not None else None
    if isinstance(key, str):
        return Place(front=front, key=f"key:{key}", marimo_cell=cell)
    if key is not None:
        return Place(front=front, key=_places.get(key) or f"view:{id(key)}", marimo_cell=cell)
    if marimo is not None:
        return Place(front=front, key=f"marimo:{marimo[0]}", generation=marimo[1], marimo_cell=cell)
    if jupyter is not None:
        return Place(front=front, key=f"cell:{jupyter[0]}", generation=jupyter[1])
    return Place(front=front, key=f"run:{uuid.uuid4().hex}")  # its own place: only `key=` its widget replaces it


def remember(widget: AgentWidget, place: Place) -> None:
    """Note the place a widget's run came from, for a later `show(key=widget)`."""
    _places[widget] = place.key


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


def jupyter_execution() -> tuple[str, object] | None:
    """The executing Jupyter cell's id and its request, or `None` (no kernel, or the front end sent no id)."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    parent = current_parent(get_ipython())
    cell_id = parent.get("metadata", {}).get("cellId") if parent is not None else None
    return (str(cell_id), parent) if cell_id else None


def stop_all() -> list[LiveRun]:
    """Stop every run started with `show()` and, in IPython, every `%%agent` run; returns those asked to stop.

    Safe from any thread. The returned handles are awaitable: `await asyncio.gather(*stop_all())` waits
    until each has ended (its view then shows `stopped`).
    """
    stopped = PYTHON_RUNS.stop_all()
    shell = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    if magics is not None:
        stopped += magics.registry.stop_all()
    return stopped


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

    from .static_output import static_transcript

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
