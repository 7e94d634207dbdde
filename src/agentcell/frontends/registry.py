"""Strong references to background runs, and which run replaces which.

Every run a front end starts is kept here until it ends (a task nobody references may be garbage
collected mid-run). A run may come from a *place* — a notebook cell, or an explicit `show(key=...)` —
and a newer run from the same place replaces the older one: it is stopped and its view says so.
One execution of a cell may start several runs (a marimo cell calling `show()` twice); they share a
*generation* and leave each other alone, while the next execution of the cell replaces them all.

Kept apart from `handle.py` (which imports the engine, pydantic-ai and anywidget) so that
`%load_ext agentcell` can create its registry without importing anything heavy. It knows a run only
as a `LiveRun` (what `handle.RunHandle` offers), so it never imports the handle module back.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable


@runtime_checkable
class LiveRun(Protocol):
    """What the registry needs of a run it keeps (a `RunHandle`, a `Batch`): `%agent stop NAME` stops any value
    that has all of it, whatever kind of run it is."""

    @property
    def run_id(self) -> str:
        """The run's id (the registry's key for a run without a place)."""
        ...

    @property
    def done(self) -> bool:
        """Whether the run has ended."""
        ...

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the run lives on (a signal handler stops it through `call_soon_threadsafe`)."""
        ...

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The task that shows the run; the registry forgets the run when it ends."""
        ...

    def cancel(self) -> None:
        """Stop the run (thread-safe)."""
        ...

    def supersede(self) -> None:
        """Stop the run because a newer run from the same place replaced it (its view says so)."""
        ...


class RunRegistry:
    """Strong references to background runs; a newer run from the same place replaces the older one."""

    def __init__(self) -> None:
        self.runs: dict[str, LiveRun] = {}
        """Every run still kept, by run id."""
        self._places: dict[str, tuple[object, list[str]]] = {}
        """Place → (the generation that started its runs, their run ids)."""

    def add(self, handle: LiveRun, *, place: str | None = None, generation: object = None) -> list[LiveRun]:
        """Keep `handle`; stop and return the runs it replaces.

        Args:
            handle: the run just started.
            place: where it was started (a cell id, a `key=`); `None`: it replaces nothing.
            generation: the execution of the place that started it; runs of the same generation
                (compared with `is`) coexist. `None` never matches, so every run replaces the last.
        """
        replaced: list[LiveRun] = []
        if place is not None:
            previous_generation, ids = self._places.get(place, (None, []))
            if generation is None or previous_generation is not generation:
                replaced = [self.runs[i] for i in ids if i in self.runs]
                ids = []
            self._places[place] = (generation, [*ids, handle.run_id])
        self.runs[handle.run_id] = handle
        for old in replaced:
            if not old.done:
                old.supersede()
        if handle.task is not None:
            handle.task.add_done_callback(lambda _t: self._forget(handle))
        return replaced

    def _forget(self, handle: LiveRun) -> None:
        if self.runs.get(handle.run_id) is handle:
            del self.runs[handle.run_id]
        for place, (generation, ids) in list(self._places.items()):
            if handle.run_id in ids:
                rest = [i for i in ids if i != handle.run_id]
                if rest:
                    self._places[place] = (generation, rest)
                else:
                    del self._places[place]

    def place_of(self, handle: LiveRun) -> str | None:
        """The place a kept run was started from, if any."""
        return next((p for p, (_g, ids) in self._places.items() if handle.run_id in ids), None)

    def stop_all(self) -> list[LiveRun]:
        """Cancel every run still going; returns those that were asked to stop."""
        live = [h for h in self.runs.values() if not h.done]
        for handle in live:
            handle.cancel()
        return live


PYTHON_RUNS = RunRegistry()
"""Every run started with `show()` in this process, until it ends (`stop_all()` and `%agent stop` stop them)."""
