"""`Batch`: one template over many rows, concurrently on the running loop.

Rows start in input order while fewer than `concurrency` run and the shared `Throttle` is not paused:
at the start, and from each row's end (`_fill`), so the next row starts in the step its predecessor
ended in, with no driver task to wake and no task per row. A row is one engine run, started from one
`engine.prepare` of the template and options (rows share the compiled template, the tools and the slots'
agents), so a row has every feature of a single run (tools, budgets, guards, journal) and its own
transcript; on Dask a row is a task awaiting the row's runner. A row that fails is a row with
`status="failed"`; the batch goes on. `cancel()` (Stop, thread-safe) starts no more rows
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
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

from pydantic_ai.models import Model

from ..engine import Prepared, Run, prepare
from ..errors import AgentcellError
from ..events import Event
from ..journal import load
from ..loops import running_loop, wait_on
from ..options import RunOptions
from ..template.program import Template
from ..usage import Usage
from . import heap
from .inputs import Row
from .results import BatchResult, RowResult, RowStatus
from .resume import DONE, Manifest, journal_folder, read_finished
from .settings import BatchOptions
from .throttle import Throttle

RowRunner = Callable[[Row, str], Coroutine[Any, Any, RowResult]]
"""Runs one row under a run id to its `RowResult` (in this kernel, or on a Dask worker)."""
Watcher = Callable[[RowResult], None]


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _run_result(run: Run, running: RowResult) -> RowResult:
    """A finished row from its engine run (a run cancelled before its first step has no result: stopped)."""
    result = run.result
    if result is None:
        return replace(running, status="stopped", error="stopped")
    return replace(running, status=result.status, results=dict(result.results), error=result.error,
                   usage=result.usage)


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
        self.owned_model: Model | None = None
        """The model `map()` built from a model string and shares between the rows (closed at the batch's end)."""
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
        self._closed = False
        """No more rows start (all started, Stop, or the cost ceiling)."""
        self._spent = Usage()
        """Usage of the rows that ended (kept as a running total: `usage` is read on every flush)."""
        self._inputs = list(rows)
        self._manifest = manifest
        self._runner = runner
        """Runs a row elsewhere (Dask); `None`: rows are engine runs in this kernel."""
        self._capacity = max(1, batch.concurrency)
        self._running = 0
        self._next = 0
        """Position in the inputs of the next row to consider starting."""
        self._idle = asyncio.Event()
        """Set once no row runs and none will start."""
        self._pause: asyncio.Task[None] | None = None
        """Waits out the throttle's pause, then starts rows again (exists only during a pause)."""
        self._watchers: list[Watcher] = []
        self._finished: list[int] = []
        self._waiter: asyncio.Event | None = None
        """Set when a row ends or the batch does; exists only while a follower waits (none per row otherwise)."""
        self._tasks: set[asyncio.Task[RowResult]] = set()
        """The running rows' tasks, when a runner runs them elsewhere (Dask)."""
        self._result: BatchResult | None = None
        self._prepared: Prepared | None = None
        """The template and options checked once for every row (its rows share their tools and agents)."""
        self._loop = asyncio.get_running_loop()
        self._restore_done(manifest)
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

    # ---- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the batch: no pending row starts, every running row stops. Thread-safe, idempotent."""
        if running_loop() is self._loop:
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
        if self.reason is None:
            self.reason = reason
        self._close()
        for run in list(self.runs.values()):
            run.cancel()
        for task in list(self._tasks):
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

    def _fill(self) -> None:
        """Start pending rows, in input order, while fewer than `concurrency` run, the shared throttle is not
        paused and the budget holds. Called when the batch starts and when a row ends, so the next row starts
        in the same step as the last one's end (no driver task to wake, no task per row in this kernel)."""
        while self._running < self._capacity and not self._closed:
            while self._next < len(self._inputs) and self.rows[self._inputs[self._next].index].finished:
                self._next += 1  # done in an earlier batch (`resume`)
            if self._next >= len(self._inputs):
                self._closed = True
            elif self.throttle.paused_for > 0:
                if self._pause is None:  # a 429 paused the batch: start nothing until the pause is over
                    self._pause = self._loop.create_task(self._after_pause(), name="agentcell-batch-pause")
                return
            elif self._over_budget():
                self._closed = True
            else:
                row = self._inputs[self._next]
                self._next += 1
                self._start(row)
        if self._running == 0 and self._closed:
            self._idle.set()

    async def _after_pause(self) -> None:
        try:
            await self.throttle.ready()
        finally:
            self._pause = None
        self._refill()

    def _close(self) -> None:
        """Start no more rows (Stop, the cost ceiling); the batch ends once the running rows have."""
        self._closed = True
        if self._pause is not None:
            self._pause.cancel()
        if self._running == 0:
            self._idle.set()

    def _over_budget(self) -> bool:
        limit = self.settings.max_cost
        if limit is None:
            return False
        spent = self.usage.cost or 0.0
        if spent >= limit:
            self.reason = self.reason or f"max_cost ${limit:g} reached (${spent:.4f} spent)"
            return True
        return False

    def _start(self, row: Row) -> None:
        """Start one row: an engine run in this kernel, or a task awaiting the row's runner (Dask)."""
        run_id = uuid.uuid4().hex[:12]
        self._running += 1
        running = replace(self.rows[row.index], status="running", run_id=run_id)
        if row.problem is not None:  # a malformed input row fails alone, with the sentence that says why
            self._record(row, replace(running, status="failed", error=row.problem, run_id=None))
            return
        if self._runner is not None:
            self._set(running)
            task = self._loop.create_task(self._runner(row, run_id), name=f"agentcell-batch-row-{row.index}")
            self._tasks.add(task)
            task.add_done_callback(lambda t: self._ended(row, self._task_result(t, running)))
            return
        try:
            if self._prepared is None:
                self._prepared = prepare(self.template, self.options)
            run = self._prepared.start(context={**(self.options.context or {}), **row.variables}, run_id=run_id)
        except Exception as exc:  # the row's boundary: one row's failure is that row's, never the batch's
            error = str(exc) if isinstance(exc, AgentcellError) else _error(exc)
            self._record(row, replace(running, status="failed", error=error))  # `_fill`'s loop goes on
            return
        self.runs[row.index] = run
        run.add_done_callback(lambda r: self._ended(row, _run_result(r, running)))
        self._set(running)

    def _task_result(self, task: asyncio.Task[RowResult], running: RowResult) -> RowResult:
        self._tasks.discard(task)
        if task.cancelled():
            return replace(running, status="stopped", error="stopped")
        exc = task.exception()
        return task.result() if exc is None else replace(running, status="failed", error=_error(exc))

    def _ended(self, row: Row, result: RowResult) -> None:
        """A row ended (called back by its run or task): record it, then start the next rows."""
        self._record(row, result)
        self._refill()

    def _record(self, row: Row, result: RowResult) -> None:
        self._running -= 1
        self.runs.pop(row.index, None)
        try:
            self._finish(result)
        except Exception as exc:  # e.g. the manifest's disk is full: stop, rather than lose rows silently
            self._stop(f"row {row.index} could not be recorded ({_error(exc)})")

    def _refill(self) -> None:
        """`_fill` from a callback or the batch's task: what it raises stops the batch (a callback's exception
        would otherwise be only logged, and the batch would wait for rows nobody starts)."""
        try:
            self._fill()
        except Exception as exc:
            self._stop(f"the batch could not start its next row ({_error(exc)})")

    def _set(self, row: RowResult) -> None:
        self.rows[row.index] = row
        for fn in self._watchers:
            fn(row)

    def _finish(self, row: RowResult) -> None:
        self._set(row)
        self._spent = self._spent + row.usage
        self._finished.append(row.index)
        if self._manifest is not None and row.status != "not_started":
            try:
                self._manifest.write(row)
            except OSError as exc:  # a full disk: stop, rather than run rows `--resume` would never know were done
                self._stop(f"row {row.index} could not be written to {self._manifest.path} ({_error(exc)}); "
                           "the rows not started were left for a later --resume")
        self._wake()
        if self.settings.max_cost is not None and self._over_budget():
            self._close()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            waiter.set()

    async def _main(self) -> None:
        heap.hold()  # the collector skips what existed before the batch while it runs (heap.py)
        try:
            self._refill()
            await self._idle.wait()
        except asyncio.CancelledError:
            self._stop("stopped")  # the batch's own task was cancelled (kernel shutdown): stop the rows too
            await self._idle.wait()
            raise
        finally:
            heap.release()
            if self.owned_model is not None:  # its rows are over: close the HTTP client of the model built here
                async with self.owned_model:  # pydantic-ai's public way: the last exit closes the provider's client
                    pass
            self._end()

    def _end(self) -> None:
        """Mark the rows never started and make the `BatchResult`; the result is made whatever else fails, so
        `done`, `await batch` and `async for` always end."""
        try:
            for row in self.rows:
                if not row.finished:
                    self._set(replace(row, status="not_started", error=self.reason or "not started"))
                    self._finished.append(row.index)
        finally:
            if self._manifest is not None:
                self._manifest.close()  # never raises (a last flush on a full disk is let go)
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
