"""Strong references to a shell's background runs, keyed by cell id.

Kept apart from `handle.py` (which imports the engine, pydantic-ai and anywidget) so that
`%load_ext agentcell` can create its registry without importing anything heavy. It knows a run only
as a `LiveRun` (what `handle.RunHandle` offers), so it never imports the handle module back.
"""

from __future__ import annotations

import asyncio
from typing import Protocol


class LiveRun(Protocol):
    """What the registry needs of a run it keeps: `handle.RunHandle` is the one kind it holds."""

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


class RunRegistry:
    """Strong references to background runs, keyed by cell id, so re-running a cell replaces its run."""

    def __init__(self) -> None:
        self.runs: dict[str, LiveRun] = {}

    def add(self, key: str, handle: LiveRun) -> None:
        previous = self.runs.get(key)
        if previous is not None:
            previous.cancel()
        self.runs[key] = handle
        if handle.task is not None:
            handle.task.add_done_callback(lambda _t: self._forget(key, handle))

    def _forget(self, key: str, handle: LiveRun) -> None:
        if self.runs.get(key) is handle:
            del self.runs[key]

    def stop_all(self) -> list[LiveRun]:
        """Cancel every run still going; returns those that were asked to stop."""
        live = [h for h in self.runs.values() if not h.done]
        for handle in live:
            handle.cancel()
        return live
