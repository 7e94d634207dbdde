"""`Run`: one run as a task on the running loop, with an event log any number of consumers can read.

The run's own task does the work and appends events to a log; consumers iterate `events()` from the
start (a widget view opened late sees everything so far). Because the work is not tied to a consumer,
a consumer that is cancelled mid-iteration does not lose the ending: `await run` still gives the
`RunResult`, and the log still ends with exactly one `ProcessingComplete`.
"""

from __future__ import annotations

import asyncio
import importlib
import uuid
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from ..errors import AgentcellError
from ..events import Event, ProcessingComplete, RunStarted, RunStatus, SlotInfo
from ..models import ResolvedModel, resolve_model
from ..result import RunResult
from ..template.program import SlotStep, Template
from .budget import ceiling_from, limits_event
from .execute import Executor
from .guard import Guards
from .state import NO_DEPS, ApproveCallback, RunState, UsageBook
from .toolbox import ToolLike, build_registry


class EventLog:
    """Append-only list of a run's events that async readers can follow."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._waiter = asyncio.Event()

    def append(self, event: Event) -> None:
        self.events.append(event)
        # Swap before waking, so a reader that wakes and finds nothing new waits on the fresh event.
        waiter, self._waiter = self._waiter, asyncio.Event()
        waiter.set()

    async def follow(self) -> AsyncIterator[Event]:
        index = 0
        while True:
            waiter = self._waiter
            while index < len(self.events):
                event = self.events[index]
                index += 1
                yield event
                if isinstance(event, ProcessingComplete):
                    return
            await waiter.wait()


class Run:
    """A run in progress (or finished). Create it with `start_run`; await it for the `RunResult`."""

    def __init__(self, state: RunState, executor: Executor, template: Template, log: EventLog) -> None:
        self.run_id = state.run_id
        self.model_name = state.model.name
        self._state = state
        self._executor = executor
        self._template = template
        self._log = log
        self._result: RunResult | None = None
        self._stop_requested = False
        self._started = False
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._main(), name=f"agentcell-run-{self.run_id}")

    @property
    def status(self) -> RunStatus | str:
        """`running` until the run ends, then the final status."""
        return "running" if self._result is None else self._result.status

    @property
    def result(self) -> RunResult | None:
        """The final result, or `None` while the run is going."""
        return self._result

    @property
    def events_so_far(self) -> tuple[Event, ...]:
        """Every event emitted so far, in order (a snapshot for a late view)."""
        return tuple(self._log.events)

    @property
    def exception(self) -> BaseException | None:
        """The unexpected exception that failed the run, for a traceback where a person is watching."""
        return self._executor.exception

    def done(self) -> bool:
        return self._result is not None

    def cancel(self) -> None:
        """Stop the run. Safe from any thread (e.g. a widget's comm handler); repeated calls are ignored."""
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            self._cancel_now()
        else:
            self._loop.call_soon_threadsafe(self._cancel_now)

    def _cancel_now(self) -> None:
        if self._stop_requested or self._task.done():
            return
        self._stop_requested = True
        # A task cancelled before its first step never runs a line, so it could not report the stop;
        # `_main` delivers an early stop itself once it has started.
        if self._started:
            self._task.cancel()

    async def wait(self) -> RunResult:
        """Wait for the end of the run (waiting does not stop it; cancel the waiter and the run goes on)."""
        await asyncio.shield(self._task)
        assert self._result is not None
        return self._result

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self.wait().__await__()

    def events(self) -> AsyncIterator[Event]:
        """Every event of the run from the first, ending after `ProcessingComplete`."""
        return self._log.follow()

    async def _main(self) -> None:
        self._started = True
        try:
            self._log.append(self._run_started())
            for warning in self._template.warnings:
                self._state.warn(None, warning.message)
            if self._stop_requested:
                self._task.cancel()  # lands at the executor's first await, inside its handling
            await self._executor.run()
            self._result = self._build_result()
        finally:
            if self._result is None:  # a bug in the engine itself: readers must still see an ending
                self._result = RunResult(run_id=self.run_id, status="failed", error="agentcell internal error")
            self._log.append(
                ProcessingComplete(
                    run_id=self.run_id,
                    status=self._result.status,
                    result=self._result,
                    early_termination=self._executor.early_termination,
                )
            )

    def _run_started(self) -> RunStarted:
        slots = tuple(SlotInfo(name=s.name, type=s.type, required=s.required) for s in self._template.slots)
        return RunStarted(
            run_id=self.run_id,
            model=self._state.model.name,
            offline=self._state.model.offline,
            slots=slots,
            limits=limits_event(self._state.ceiling),
            tools=self._state.registry.names,
        )

    def _build_result(self) -> RunResult:
        ex, state = self._executor, self._state
        answers = [s.slot.name for s in self._template.steps if isinstance(s, SlotStep) and s.slot.type != "halt"]
        messages = tuple(m for name in answers for m in state.transcript.get(name, ()))
        return RunResult(
            run_id=self.run_id,
            status=ex.status,
            results=dict(ex.results),
            answer=ex.results.get(answers[-1]) if answers else None,
            usage=state.usage.total,
            messages=messages,
            warnings=tuple(state.warnings),
            error=ex.error,
            partial=dict(state.partial),
            model=state.model.name,
            limits=limits_event(state.ceiling),
        )


def start_run(
    template: Template | str,
    *,
    context: Mapping[str, Any] | None = None,
    model: str | Model | None = None,
    tools: Sequence[ToolLike] = (),
    deps: Any = None,
    deps_type: type[Any] = NO_DEPS,
    limits: UsageLimits | None = None,
    approve: ApproveCallback | None = None,
    approve_writes: bool = False,
    history: Sequence[ModelMessage] | None = None,
    run_id: str | None = None,
) -> Run:
    """Check everything that can be checked, then start the run as a task on the running loop.

    Raises (before any model call): `TemplateSyntaxError`/`UndefinedVariableError`,
    `ToolDefinitionError`, `ModelConfigError`, or `AgentcellError` when no event loop is running.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise AgentcellError("start_run() needs a running event loop; use complete() from sync code") from None
    compiled = _compile(template)
    context = dict(context or {})
    compiled.check_context(list(context))
    resolved: ResolvedModel = resolve_model(model)
    rid = run_id or uuid.uuid4().hex[:12]
    log = EventLog()
    state = RunState(
        run_id=rid,
        emit=log.append,
        model=resolved,
        ceiling=ceiling_from(limits),
        registry=build_registry(tools, approve_writes=approve_writes),
        guards=Guards(rid, log.append),
        usage=UsageBook(rid, log.append),
        deps=deps,
        deps_type=deps_type,
        approve=approve,
    )
    return Run(state, Executor(state, compiled, context, history or ()), compiled, log)


def _compile(template: Template | str) -> Template:
    if not isinstance(template, str):
        return template
    # Imported late: only string templates need the compiler, and it is built beside the engine.
    compiler = importlib.import_module("agentcell.template")
    compiled: Template = compiler.compile_template(template)
    return compiled
