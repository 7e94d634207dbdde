"""The reading side of a `Batch` (`runner.py`): its state, its rows' events, `async for`, `await`.

Kept apart so `runner.py` holds how rows start and end; these read the attributes `Batch.__init__` sets.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Generator
from typing import Any

from ..engine import Run
from ..errors import AgentcellError
from ..events import Event
from ..journal import load
from ..loops import wait_on
from ..options import RunOptions
from ..usage import Usage
from .results import BatchResult, RowResult
from .resume import journal_folder

Watcher = Callable[[RowResult], None]


class BatchReading:
    """What a `Batch` offers to read; the attributes below are set by `Batch.__init__`."""

    rows: list[RowResult]
    runs: dict[int, Run]
    options: RunOptions
    _result: BatchResult | None
    _task: asyncio.Task[None]
    _loop: asyncio.AbstractEventLoop
    _spent: Usage
    _watchers: list[Watcher]
    _finished: list[int]
    _waiter: asyncio.Event | None

    @property
    def done(self) -> bool:
        return self._result is not None

    @property
    def result(self) -> BatchResult | None:
        """The `BatchResult` once every row has ended, else `None`."""
        return self._result

    @property
    def task(self) -> asyncio.Task[None]:
        """The task that owns the batch (the registry keeps it)."""
        return self._task

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    @property
    def usage(self) -> Usage:
        """Totals over the rows that ended, plus what the running rows spent so far."""
        total = self._spent
        for run in list(self.runs.values()):
            total = total + run.usage
        return total

    def events_of(self, index: int) -> tuple[Event, ...] | None:
        """Row `index`'s events: live while it runs, from its journal once it ended (`None`: not kept)."""
        run = self.runs.get(index)
        if run is not None:
            return run.events_so_far
        row = self.rows[index]
        folder = journal_folder(self.options.journal)
        if row.run_id is None or folder is None:
            return None
        try:
            return load(row.run_id, path=folder).events
        except (AgentcellError, OSError, ValueError):
            return None

    def watch(self, fn: Watcher) -> None:
        """Call `fn(row)` whenever a row starts or ends (on the batch's loop)."""
        self._watchers.append(fn)

    def __aiter__(self) -> AsyncIterator[RowResult]:
        return self._follow()

    async def _follow(self) -> AsyncIterator[RowResult]:
        index = 0
        while True:
            while index < len(self._finished):
                yield self.rows[self._finished[index]]
                index += 1
            if self._result is not None:
                return
            if self._waiter is None:  # made after the last look, with no await between: no end is missed
                self._waiter = asyncio.Event()
            await self._waiter.wait()

    def __await__(self) -> Generator[Any, None, BatchResult]:
        return self.wait().__await__()

    async def wait(self) -> BatchResult:
        """Wait for every row to end (cancelling the waiter does not stop the batch); from any loop."""
        if self._result is None:  # an ended batch needs no loop (its own may have stopped since)
            await wait_on(self._loop, lambda: asyncio.shield(self._task), what="this batch")
        assert self._result is not None
        return self._result
