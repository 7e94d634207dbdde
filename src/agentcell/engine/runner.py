"""`Run`: one run as a task on the running loop, with an event log any number of consumers can read.

The run's own task does the work and appends events to a log; consumers iterate `events()` from the
start (a widget view opened late sees everything so far). Because the work is not tied to a consumer,
a consumer that is cancelled mid-iteration does not lose the ending: `await run` still gives the
`RunResult`, and the log still ends with exactly one `ProcessingComplete`.
"""

from __future__ import annotations

import asyncio
import importlib
import time
import uuid
from collections.abc import AsyncIterator, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from ..errors import AgentcellError
from ..events import Event, ProcessingComplete, RunResumed, RunStarted, RunStatus, RunWarning, SlotInfo
from ..journal import Journal, JournalOption, journal_path
from ..models import ResolvedModel, resolve_model
from ..result import RunResult
from ..template.program import SlotStep, Template
from ..transcript import Transcript
from .budget import ceiling_from, limits_event
from .compaction import DEFAULT_COMPACTION, Compaction
from .context import window_for
from .execute import Executor, ResumePoint
from .guard import Guards
from .requests import ContextKeeper
from .state import NO_DEPS, ApproveCallback, RunState, UsageBook
from .toolbox import Dispatch, ToolLike, ToolRegistry, build_registry

RESUMABLE: frozenset[str] = frozenset({"stopped", "failed", "budget_exhausted"})


class EventLog:
    """Append-only list of a run's events that async readers can follow, reduced into the run's transcript.

    The transcript is the one model of the run's state every reader shares (`Run.transcript`); a
    resumed run's segments reduce into the same one, as the widget does.
    """

    def __init__(self, transcript: Transcript | None = None) -> None:
        self.events: list[Event] = []
        self.transcript = transcript if transcript is not None else Transcript()
        self._t0 = time.monotonic()
        self._waiter = asyncio.Event()

    def append(self, event: Event) -> None:
        self.events.append(event)
        self.transcript.apply_event(event, t=round(time.monotonic() - self._t0, 3))
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

    def __init__(
        self,
        state: RunState,
        executor: Executor,
        template: Template,
        log: EventLog,
        setup: _Setup,
        *,
        resumed_from: RunResult | None = None,
    ) -> None:
        self.run_id = state.run_id
        self.segment = 1 if resumed_from is None else resumed_from.segment + 1
        """1 for a new run; a resumed run's segments count on."""
        self._setup = setup
        self._resumed_from = resumed_from
        self.model_name = state.model.name
        self._state = state
        self._executor = executor
        self._template = template
        self._log = log
        self.transcript = log.transcript
        """The run's state as every view shows it (slots, rounds, answers with retractions applied), live."""
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

    def resume(self) -> Run:
        """Go on with a stopped (or failed) run as its next segment, a new `Run` with the same run id.

        Finished slots keep their values and are not run again; the stopped slot starts again from
        its last finished tool round (its partial answer text is discarded and written anew). Usage
        totals carry over, so the new segment's `RunResult.usage` covers the whole run.

        Raises:
            AgentcellError: the run is still going, completed, or was halted by a guard.
        """
        if self._result is None:
            raise AgentcellError(f"run {self.run_id} is still going; stop it (run.cancel()) before resuming")
        return _launch(self._setup, self.run_id, resume=self._result, transcript=self.transcript)

    async def _main(self) -> None:
        self._started = True
        try:
            self._state.emit(self._run_started())
            if self.segment > 1:
                self._state.emit(self._run_resumed())
            if self._state.journal is not None:
                self._state.journal.history(self._executor.history)
            for note in self._setup.notes:
                self._state.warn(None, note)
            for warning in self._template.warnings:
                self._state.warn(None, warning.message)
            if self._stop_requested:
                self._task.cancel()  # lands at the executor's first await, inside its handling
            await self._executor.run()
            self._result = self._build_result()
        finally:
            if self._result is None:  # a bug in the engine itself: readers must still see an ending
                self._result = RunResult(run_id=self.run_id, status="failed", error="agentcell internal error")
            self._state.emit(
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
            tool_schemas=self._state.registry.schemas(),
        )

    def _run_resumed(self) -> RunResumed:
        finished = self._resumed_from.results if self._resumed_from is not None else {}
        kept = tuple(s.name for s in self._template.slots if s.name in finished)
        restarting = next((s.name for s in self._template.slots if s.name not in kept and s.type != "halt"), None)
        return RunResumed(run_id=self.run_id, segment=self.segment, kept=kept, restarting=restarting)

    def _build_result(self) -> RunResult:
        ex, state = self._executor, self._state
        answers = [s.slot.name for s in self._template.steps if isinstance(s, SlotStep) and s.slot.type != "halt"]
        slot_messages = {name: state.transcript[name] for name in answers if name in state.transcript}
        messages = (*ex.history, *(m for name in answers for m in slot_messages.get(name, ())))
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
            history_length=len(ex.history),
            slot_messages=slot_messages,
            segment=self.segment,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Setup:
    """Everything a run's segments share (checked once, reused by `Run.resume()`)."""

    template: Template
    context: Mapping[str, Any]
    model: ResolvedModel
    limits: UsageLimits | None
    registry: ToolRegistry
    deps: Any
    deps_type: type[Any]
    approve: ApproveCallback | None
    history: tuple[ModelMessage, ...]
    context_window: int | None
    compaction: Compaction | None
    journal: JournalOption
    notes: tuple[str, ...] = ()
    """Warnings found while setting up (shown at the start of each segment)."""


def start_run(
    template: Template | str,
    *,
    context: Mapping[str, Any] | None = None,
    model: str | Model | None = None,
    tools: Sequence[ToolLike] = (),
    dispatch: Dispatch | None = None,
    deps: Any = None,
    deps_type: type[Any] = NO_DEPS,
    limits: UsageLimits | None = None,
    approve: ApproveCallback | None = None,
    approve_writes: bool = False,
    history: Sequence[ModelMessage] | None = None,
    run_id: str | None = None,
    context_window: int | None = None,
    compaction: Compaction | None = DEFAULT_COMPACTION,
    journal: JournalOption = None,
    resume_from: RunResult | None = None,
) -> Run:
    """Check everything that can be checked, then start the run as a task on the running loop.

    Long-run options: `context_window` overrides the model's known window for the gauge and
    compaction; `compaction=None` turns compaction and tool-result cutting off; `journal` is `None`
    (the default journal), `False`, `True` or a folder/`.jsonl` path; `resume_from` goes on with a
    stopped run's `RunResult` as its next segment (same template and context expected), like
    `Run.resume()`. `tools` may mix callables, `pydantic_ai.Tool` objects and OpenAI-style
    declarations (`{"type": "function", "function": {...}}`) whose functions `dispatch` maps by name.

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
    if resume_from is not None and history is not None:
        raise AgentcellError("pass history= or resume_from=, not both (a resumed run keeps its own history)")
    if resume_from is not None:
        history = resume_from.messages[: resume_from.history_length]
    setup = _Setup(
        template=compiled,
        context=context,
        model=resolve_model(model),
        limits=limits,
        registry=build_registry(tools, dispatch=dispatch, approve_writes=approve_writes),
        deps=deps,
        deps_type=deps_type,
        approve=approve,
        history=tuple(history or ()),
        context_window=context_window,
        compaction=compaction,
        journal=journal,
    )
    if compaction is not None and compaction.model is not None:
        resolve_model(compaction.model)  # a bad summarizer fails now, not at the first compaction
    rid = run_id or (resume_from.run_id if resume_from is not None else uuid.uuid4().hex[:12])
    return _launch(setup, rid, resume=resume_from)


def _launch(setup: _Setup, run_id: str, *, resume: RunResult | None, transcript: Transcript | None = None) -> Run:
    """Start one segment of a run: the first, or the next one after `resume`."""
    if resume is not None and resume.status not in RESUMABLE:
        raise AgentcellError(
            f"run {run_id} ended {resume.status!r}; only a stopped, failed or out-of-budget run can be resumed"
        )
    segment = 1 if resume is None else resume.segment + 1
    log = EventLog(transcript)
    sink = _Sink(log, run_id)
    notes = list(setup.notes)
    sink.journal = _open_journal(run_id, setup.journal, segment, notes)
    state = RunState(
        run_id=run_id,
        emit=sink.emit,
        model=setup.model,
        ceiling=ceiling_from(setup.limits),
        registry=setup.registry,
        guards=Guards(run_id, sink.emit),
        usage=UsageBook(run_id, sink.emit, base=None if resume is None else resume.usage),
        deps=setup.deps,
        deps_type=setup.deps_type,
        approve=setup.approve,
        context=_keeper(setup),
        journal=sink.journal,
    )
    sink.state = state
    point = None if resume is None else ResumePoint(results=resume.results, slot_messages=resume.slot_messages)
    executor = Executor(state, setup.template, setup.context, setup.history, resume=point)
    return Run(state, executor, setup.template, log, replace(setup, notes=tuple(notes)), resumed_from=resume)


def _keeper(setup: _Setup) -> ContextKeeper:
    compaction = setup.compaction
    writer = None if compaction is None or compaction.model is None else resolve_model(compaction.model).model
    window = window_for(setup.model.name, override=setup.context_window, offline=setup.model.offline)
    return ContextKeeper(window=window, compaction=compaction, summarizer=writer)


def _open_journal(run_id: str, option: JournalOption, segment: int, notes: list[str]) -> Journal | None:
    path = journal_path(run_id, option)
    if path is None:
        return None
    try:
        return Journal(path, segment=segment)
    except OSError as exc:  # a read-only home must not stop the run; say so instead
        notes.append(f"the journal could not be opened ({exc}); this run is not journaled")
        return None


class _Sink:
    """Where every event goes: the run's log (for consumers), then the journal (if any)."""

    def __init__(self, log: EventLog, run_id: str) -> None:
        self._log = log
        self._run_id = run_id
        self.journal: Journal | None = None
        self.state: RunState | None = None

    def emit(self, event: Event) -> None:
        self._log.append(event)
        if self.journal is None:
            return
        try:
            self.journal.event(event)
        except (OSError, ValueError) as exc:  # disk full, folder gone, unserializable: keep running
            self.journal.close()
            self.journal = None
            if self.state is not None:
                self.state.journal = None
            message = f"journaling stopped: {exc}"
            self._log.append(RunWarning(run_id=self._run_id, slot=None, message=message))


def _compile(template: Template | str) -> Template:
    if not isinstance(template, str):
        return template
    # Imported late: only string templates need the compiler, and it is built beside the engine.
    compiler = importlib.import_module("agentcell.template")
    compiled: Template = compiler.compile_template(template)
    return compiled
