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
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

from pydantic_ai.models import Model

from ..engine import Prepared, Run, prepare
from ..errors import AgentcellError
from ..loops import running_loop
from ..options import RunOptions
from ..template.program import Template
from ..usage import Usage, format_cost
from . import heap
from .errors import BatchError
from .inputs import Row
from .reading import BatchReading, Watcher
from .results import BatchResult, RowResult, RowStatus
from .resume import DONE, Manifest, open_manifest, read_finished
from .scored import Scoring
from .scoring import Scorer
from .settings import BatchOptions
from .throttle import Throttle

RowRunner = Callable[[Row, str], Coroutine[Any, Any, RowResult]]
"""Runs one row under a run id to its `RowResult` (in this kernel, or on a Dask worker)."""


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _run_result(run: Run, running: RowResult) -> RowResult:
    """A finished row from its engine run (a run cancelled before its first step has no result: stopped)."""
    result = run.result
    if result is None:
        return replace(running, status="stopped", error="stopped")
    return replace(running, status=result.status, results=dict(result.results), error=result.error,
                   usage=result.usage)


class Batch(BatchReading):
    """A batch in progress (or finished): async-iterable of finished rows, awaitable, cancellable."""

    scorer: Scorer | None
    """The expected columns and evaluators each finished row is scored with (`None`: not scored)."""
    baseline: Sequence[RowResult] | None
    """The rows of the earlier batch this one is compared with (`baseline=` / `--baseline`)."""
    _began: dict[int, float]
    """Row index → when it started, while it runs (its `duration` when it ends)."""

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
        scorer: Scorer | None = None, baseline: Sequence[RowResult] | None = None, carried: Sequence[RowResult] = (),
    ) -> None:
        self.template, self.settings, self.engine = template, batch, engine
        self.owned_model: Model | None = None
        """The model `map()` built from a model string and shares between the rows (closed at the batch's end)."""
        self.run_id = f"batch-{uuid.uuid4().hex[:8]}"
        """A name for the batch (`%agent stop` says it; each row's run has its own run id)."""
        self.options = options
        """Every row's run options; a row's own fields are added to `options.context`."""
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
        self._idle = asyncio.Event()  # set once no row runs and none will start
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
        self.scorer, self.baseline, self._began = scorer, baseline, {}  # see the class's annotations
        self._loop = asyncio.get_running_loop()
        self._scoring = None if scorer is None else Scoring(scorer, self._loop, self._set, self._scored)
        self._restore_done(manifest, carried)
        self._task = self._loop.create_task(self._main(), name="agentcell-batch")

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

    def retry(self) -> Batch:
        """A new batch over the same rows running only those that did not complete, like `--resume` without the
        journal (the others are carried over, `resumed`). `BatchError` while this one runs, or on Dask."""
        if not self.done:
            raise BatchError("this batch is still running: stop it or wait for it before retrying its failed rows")
        if self._runner is not None:
            raise BatchError("retry runs in this kernel; start the batch again with --resume to retry it on Dask")
        manifest = None if self._manifest is None else open_manifest(self._manifest.path)
        carried = [r for r in self.rows if r.status in DONE]
        return Batch(self.template, self._inputs, self.options, self.settings, throttle=self.throttle,
                     manifest=manifest, scorer=self.scorer, baseline=self.baseline, carried=carried)

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
    def _restore_done(self, manifest: Manifest | None, carried: Sequence[RowResult]) -> None:
        for done in carried:  # `retry()`: the rows an earlier batch over the same inputs finished stay as they are
            self.rows[done.index] = replace(done, resumed=True)
            self._finished.append(done.index)
            self._spent = self._spent + done.usage
        if not self.settings.resume or manifest is None:
            return
        finished = read_finished(manifest.path)
        for row in self.rows:
            before = finished.get(row.key)
            if before is not None and before.status in DONE:
                status = cast(RowStatus, before.status)
                done = replace(row, status=status, results=before.results, usage=before.usage,
                               run_id=before.run_id, error=before.error, resumed=True, duration=before.duration)
                scored = done if self._scoring is None else self._scoring.finish(done)
                self.rows[row.index] = scored or done
                if scored is not None:
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
            self.reason = self.reason or f"max_cost ${limit:g} reached ({format_cost(spent)} spent)"
            return True
        return False

    def _start(self, row: Row) -> None:
        """Start one row: an engine run in this kernel, or a task awaiting the row's runner (Dask)."""
        run_id = uuid.uuid4().hex[:12]
        self._running += 1
        self._began[row.index] = time.monotonic()
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
        began = self._began.pop(row.index, None)
        if began is not None:
            row = replace(row, duration=time.monotonic() - began)
        scored = row if self._scoring is None else self._scoring.finish(row)  # `None`: scored later, in a task
        self._set(scored or row)
        self._spent = self._spent + row.usage
        if scored is not None:
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

    def _scored(self, index: int) -> None:
        """Row `index` was scored in a task of its own: it counts as finished now."""
        self._finished.append(index)
        self._wake()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            waiter.set()

    async def _main(self) -> None:
        heap.hold()  # the collector skips what existed before the batch while it runs (heap.py)
        try:
            self._refill()
            await self._idle.wait()
            if self._scoring is not None:
                await self._scoring.drain()  # rows still being scored by asynchronous evaluators
        except asyncio.CancelledError:
            self._stop("stopped")  # the batch's own task was cancelled (kernel shutdown): stop the rows too
            if self._scoring is not None:
                self._scoring.cancel()
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
            comparison = None
            if self.baseline is not None:
                from .regress import compare

                comparison = compare(self.rows, self.baseline, self.slots)
            self._result = BatchResult(
                rows=tuple(self.rows), slots=self.slots, keep=self.settings.keep,
                status="stopped" if self.reason else "completed", reason=self.reason,
                template_sha256=self.template.sha256,
                expect={} if self.scorer is None else self.scorer.expect, comparison=comparison)
            self._wake()

    def __repr__(self) -> str:
        groups: dict[str, int] = {}
        for row in self.rows:
            groups[row.group] = groups.get(row.group, 0) + 1
        shown = ", ".join(f"{n} {g}" for g, n in groups.items())
        return f"<agentcell batch of {len(self.rows)} rows: {shown}>"
