"""`Batch`: one template over many rows, concurrently on the running loop (SPEC §3.12).

A driver task starts rows in input order while fewer than `concurrency` run (a semaphore) and the
shared `Throttle` is not paused; each row is one engine run, started from one `engine.prepare` of the
template and options (rows share the compiled template, the tools and the slots' agents), so a row has every
feature of a single run (tools, budgets, guards, journal) and its own transcript. A row that fails
is a row with `status="failed"`; the batch goes on. `cancel()` (Stop, thread-safe) stops the driver
(pending rows are never started: they end `not_started`) and stops every running row (its provider
request is closed; the row ends `stopped`). `--max-cost` stops starting rows once the known cost
passes it. Finished rows are appended to the template's manifest (`resume.py`), which `resume=True`
reads to skip rows already done.

`async for row in batch` yields each `RowResult` as it finishes; `await batch` gives the
`BatchResult` (rows in input order). The batch only drops its reference to a row's `Run` when the
row ends, so a finished row costs its `RowResult` and no event log (its transcript is in the journal).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from ..engine import Prepared, Run, prepare
from ..errors import AgentcellError
from ..events import Event
from ..journal import load
from ..options import RunOptions
from ..template.program import Template
from ..usage import Usage
from .inputs import Row
from .results import BatchResult, RowResult, RowStatus
from .resume import DONE, Manifest, journal_folder, read_finished
from .throttle import Throttle

RowRunner = Callable[[Row, str], Awaitable[RowResult]]
"""Runs one row under a run id to its `RowResult` (in this kernel, or on a Dask worker)."""
Watcher = Callable[[RowResult], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchOptions:
    """How a batch runs its rows (the per-row run options are a `RunOptions`)."""

    concurrency: int = 8
    """Rows running at once."""
    max_cost: float | None = None
    """Stop starting rows once the known cost (USD) passes this; rows running go on to their end."""
    keep: bool = False
    """Keep the input columns in the results table."""
    resume: bool = False
    """Skip rows an earlier batch over the same template finished (same row content)."""


class Batch:
    """A batch in progress (or finished): async-iterable of finished rows, awaitable, cancellable."""

    def __init__(
        self,
        template: Template,
        rows: Sequence[Row],
        options: RunOptions,
        batch: BatchOptions,
        *,
        throttle: Throttle | None = None,
        manifest: Manifest | None = None,
        runner: RowRunner | None = None,
        engine: Literal["kernel", "dask"] = "kernel",
    ) -> None:
        self.template = template
        self.run_id = f"batch-{uuid.uuid4().hex[:8]}"
        """A name for the batch (`%agent stop` says it; each row's run has its own run id)."""
        self.options = options
        """Every row's run options; a row's own fields are added to `options.context`."""
        self.settings = batch
        self.engine = engine
        self.throttle = throttle or Throttle()
        self.slots = tuple(s.name for s in template.slots if s.type != "halt")
        self.rows: list[RowResult] = [RowResult(index=r.index, key=r.key, input=r.fields) for r in rows]
        """Every row's current state, in input order."""
        self.runs: dict[int, Run] = {}
        """Row index → its engine run, while it runs in this kernel."""
        self.reason: str | None = None
        """Why the batch stopped starting rows (`None` while it may start more)."""
        self.started_at = time.monotonic()
        self.view: Any = None
        """The widget showing this batch, if any (set by the kernel glue)."""
        self._stopping = False
        self._spent = Usage()
        """Usage of the rows that ended (kept as a running total: `usage` is read on every flush)."""
        self._inputs = list(rows)
        self._manifest = manifest
        self._runner = runner or self._run_here
        self._watchers: list[Watcher] = []
        self._finished: list[int] = []
        self._waiter = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._result: BatchResult | None = None
        self._prepared: Prepared | None = None
        """The template and options checked once for every row (its rows share their tools and agents)."""
        self._loop = asyncio.get_running_loop()
        self._restore_done(manifest)
        self._driver = self._loop.create_task(self._drive(), name="agentcell-batch-driver")
        self._task = self._loop.create_task(self._main(), name="agentcell-batch")

    # ---- reading ---------------------------------------------------------------------------
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
            waiter = self._waiter
            while index < len(self._finished):
                yield self.rows[self._finished[index]]
                index += 1
            if self._result is not None:
                return
            await waiter.wait()

    def __await__(self) -> Generator[Any, None, BatchResult]:
        return self.wait().__await__()

    async def wait(self) -> BatchResult:
        """Wait for every row to end (cancelling the waiter does not stop the batch)."""
        await asyncio.shield(self._task)
        assert self._result is not None
        return self._result

    # ---- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the batch: no pending row starts, every running row stops. Thread-safe, idempotent."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            self._stop("stopped")
        else:
            self._loop.call_soon_threadsafe(self._stop, "stopped")

    def supersede(self) -> None:
        """Stop the batch because the same cell started a newer run or batch (the registry calls it)."""
        self.cancel()

    def cancel_row(self, index: int) -> None:
        """Stop one running row (its Stop button in the row view); the batch goes on. Thread-safe."""
        run = self.runs.get(index)
        if run is not None:
            run.cancel()

    def _stop(self, reason: str) -> None:
        self._stopping = True
        if self.reason is None:
            self.reason = reason
        self._driver.cancel()
        for run in list(self.runs.values()):
            run.cancel()
        for task in list(self._tasks):
            if self.engine == "dask":
                task.cancel()  # a Dask row's task owns its future: cancelling it cancels the future

    # ---- driving ---------------------------------------------------------------------------
    def _restore_done(self, manifest: Manifest | None) -> None:
        if not self.settings.resume or manifest is None:
            return
        finished = read_finished(manifest.path)
        for row in self.rows:
            before = finished.get(row.key)
            if before is not None and before.status in DONE:
                status = cast(RowStatus, before.status)
                self.rows[row.index] = replace(row, status=status, results=before.results, usage=before.usage,
                                               run_id=before.run_id, error=before.error, resumed=True)
                self._finished.append(row.index)
                self._spent = self._spent + before.usage

    async def _drive(self) -> None:
        """Start every row that is not done, in order, at most `concurrency` at once."""
        gate = asyncio.Semaphore(max(1, self.settings.concurrency))
        for row in self._inputs:
            if self.rows[row.index].finished:
                continue
            await gate.acquire()
            await self.throttle.ready()
            if self._over_budget():
                gate.release()
                return
            self._set(replace(self.rows[row.index], status="running"))
            task = self._loop.create_task(self._row(row, gate), name=f"agentcell-batch-row-{row.index}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _over_budget(self) -> bool:
        limit = self.settings.max_cost
        if limit is None:
            return False
        spent = self.usage.cost or 0.0
        if spent >= limit:
            self.reason = self.reason or f"max_cost ${limit:g} reached (${spent:.4f} spent)"
            return True
        return False

    async def _row(self, row: Row, gate: asyncio.Semaphore) -> None:
        run_id = uuid.uuid4().hex[:12]
        if self._stopping:  # stopped between this task's creation and its first step: it never started
            gate.release()
            self._finish(replace(self.rows[row.index], status="not_started", error=self.reason))
            return
        try:
            result = await self._runner(row, run_id)
        except asyncio.CancelledError:
            result = replace(self.rows[row.index], status="stopped", error="stopped", run_id=run_id)
        except Exception as exc:  # the row's boundary: one row's failure is that row's, never the batch's
            result = replace(self.rows[row.index], status="failed", error=f"{type(exc).__name__}: {exc}",
                             run_id=run_id)
        finally:
            gate.release()
            self.runs.pop(row.index, None)
        self._finish(result)

    async def _run_here(self, row: Row, run_id: str) -> RowResult:
        """Run one row in this kernel as an engine run."""
        context = {**(self.options.context or {}), **row.fields}
        base = self.rows[row.index]
        try:
            if self._prepared is None:
                self._prepared = prepare(self.template, self.options)
            run = self._prepared.start(context=context, run_id=run_id)
        except AgentcellError as exc:
            return replace(base, status="failed", error=str(exc), run_id=run_id)
        self.runs[row.index] = run
        if self._stopping:
            run.cancel()
        self._set(replace(base, run_id=run_id))
        result = await run.wait()
        return replace(base, status=result.status, results=dict(result.results), error=result.error,
                       usage=result.usage, run_id=run_id)

    def _set(self, row: RowResult) -> None:
        self.rows[row.index] = row
        for fn in self._watchers:
            fn(row)

    def _finish(self, row: RowResult) -> None:
        self._set(row)
        self._spent = self._spent + row.usage
        self._finished.append(row.index)
        if self._manifest is not None and row.status != "not_started":
            self._manifest.write(row)
        self._wake()
        if self.settings.max_cost is not None and self._over_budget():
            self._driver.cancel()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, asyncio.Event()
        waiter.set()

    async def _main(self) -> None:
        try:
            await asyncio.wait([self._driver])
            while self._tasks:
                await asyncio.wait(list(self._tasks))
        except asyncio.CancelledError:
            self._stop("stopped")  # the batch's own task was cancelled (kernel shutdown): stop the rows too
            while self._tasks:
                await asyncio.wait(list(self._tasks))
            raise
        finally:
            self._end()

    def _end(self) -> None:
        for row in self.rows:
            if not row.finished:
                self._set(replace(row, status="not_started", error=self.reason or "not started"))
                self._finished.append(row.index)
        if self._manifest is not None:
            self._manifest.close()
        self._result = BatchResult(
            rows=tuple(self.rows), slots=self.slots, keep=self.settings.keep,
            status="stopped" if self.reason else "completed", reason=self.reason,
            template_sha256=self.template.sha256)
        self._wake()

    def __repr__(self) -> str:
        groups: dict[str, int] = {}
        for row in self.rows:
            groups[row.group] = groups.get(row.group, 0) + 1
        shown = ", ".join(f"{n} {g}" for g, n in groups.items())
        return f"<agentcell batch of {len(self.rows)} rows: {shown}>"
