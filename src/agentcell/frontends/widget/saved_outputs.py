"""Saved notebooks keep every run's transcript, also when a headless runner executes them.

A background run ends after its cell has finished, and its final output update travels with *its
own cell's* parent header (the kernel keeps the parent per asyncio context, and the run's task was
created in the cell's context). JupyterLab applies such an update by display id, but nbclient,
papermill and `nbconvert --execute` only read messages whose parent is the cell they are running
now, so the update is dropped and the saved notebook keeps the empty placeholder.

So at every cell boundary (IPython's `pre_run_cell` and `post_run_cell` events, which run in the new
cell's context) each run shown since is published again under the current cell's parent: a
finished run's final transcript (once, then it is forgotten), a running one's transcript so far,
marked unfinished. Headless runners apply it to the earlier cell by display id, and a run still
going when the notebook ends is saved with what it had. In JupyterLab the extra update replaces
the hidden static twin with the same content.

Why not `pre_execute`/`post_execute`: the `comm` package fires those around *every* comm message
from the browser (a Stop click, a row opened, a snapshot asked for), on whatever thread handles it,
which on ipykernel 7 with JupyterLab >= 4.4 is a subshell thread. There a republish read the run while
the kernel's loop was ending it and could go out after the final update, so a stopped batch's saved
table stayed "running"; and every click re-rendered every tracked transcript. For the same reason a
view is republished only at cell boundaries on the thread that showed it (the thread of its run's
loop): a cell run in a subshell publishes the views shown in that subshell, and leaves the main
shell's to the main shell's next cell.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any, Protocol


class Republishable(Protocol):
    """A shown view whose saved output can be published again (`AgentWidget`, `BatchWidget`)."""

    def republish(self) -> bool:
        """Publish the saved output under the current cell; `True` once it was final."""
        ...


class SavedOutputs:
    """The shown views of one shell whose final output has not yet been published inside a cell."""

    def __init__(self) -> None:
        self._views: list[tuple[Republishable, int]] = []
        """Each view with the thread that showed it."""
        self._lock = threading.Lock()

    def track(self, view: Republishable) -> None:
        with self._lock:
            if all(v is not view for v, _ in self._views):
                self._views.append((view, threading.get_ident()))

    def at_cell_boundary(self, *_args: Any) -> None:
        """Publish this thread's tracked views again; forget those whose final output went out now."""
        here = threading.get_ident()
        with self._lock:
            mine = [view for view, thread in self._views if thread == here]
        finished: list[Republishable] = []
        for view in mine:
            try:
                final = view.republish()
            except Exception:  # a failing view must not break the user's cell
                final = True
            if final:
                finished.append(view)
        if finished:
            with self._lock:
                self._views = [(v, t) for v, t in self._views if all(v is not f for f in finished)]

    def __len__(self) -> int:
        return len(self._views)


_by_shell: weakref.WeakKeyDictionary[Any, SavedOutputs] = weakref.WeakKeyDictionary()


def saved_outputs(shell: Any) -> SavedOutputs | None:
    """The shell's keeper (hooks registered on first use), or `None` outside IPython."""
    if shell is None or not hasattr(shell, "events"):
        return None
    keeper = _by_shell.get(shell)
    if keeper is None:
        keeper = _by_shell[shell] = SavedOutputs()
        shell.events.register("pre_run_cell", keeper.at_cell_boundary)
        shell.events.register("post_run_cell", keeper.at_cell_boundary)
    return keeper


def update_saved(display_id: str | None, bundle: Callable[[], dict[str, str]], *, log: logging.Logger,
                 what: str) -> None:
    """Replace a shown view's static output (`display_id`; `None` until shown) with `bundle()`, HTML and text.

    Where there is no display publisher (plain Python) the failure is only logged, naming `what` was not
    updated: the live view shows the end."""
    if display_id is None:
        return
    from IPython.display import update_display

    try:
        update_display(bundle(), raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
    except Exception as exc:
        log.debug("agentcell: could not update the %s: %s", what, exc)
