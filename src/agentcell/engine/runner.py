"""`Run`: one run as a task on the running loop, with an event log any number of consumers can read.

The run's own task does the work and appends events to a log; consumers iterate `events()` from the
start (a widget view opened late sees everything so far). Because the work is not tied to a consumer,
a consumer that is cancelled mid-iteration does not lose the ending: `await run` still gives the
`RunResult`, and the log still ends with exactly one `ProcessingComplete`. `setup.py` builds a run
from a template and its `RunOptions`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Generator
from contextlib import nullcontext
from typing import Any

from ..errors import AgentcellError
from ..events import (
    Event,
    ProcessingComplete,
    RunResumed,
    RunStarted,
    SlotInfo,
)
from ..result import RunResult
from ..template.program import Template
from ..transcript import Transcript
from ..usage import LiveStatus, Usage
from .budget import limits_event
from .eventlog import EventLog
from .execute import Executor
from .lesson import LessonControls
from .state import RunState


class Run:
    """A run in progress (or finished). Create it with `start_run`; await it for the `RunResult`."""

    def __init__(
        self,
        state: RunState,
        executor: Executor,
        template: Template,
        log: EventLog,
        *,
        relaunch: Callable[[RunResult, Transcript], Run],
        notes: tuple[str, ...] = (),
        resumed_from: RunResult | None = None,
        prelude: tuple[Event, ...] = (),
        forked: RunResumed | None = None,
    ) -> None:
        self.run_id = state.run_id
        self.segment = 1 if resumed_from is None else resumed_from.segment + 1
        """1 for a new run; a resumed run's segments count on."""
        self._relaunch = relaunch
        """Starts the next segment after an ending, reducing into the same transcript (`setup.py` binds it)."""
        self._notes = notes
        self._resumed_from = resumed_from
        self._prelude = prelude
        """A fork's kept part: its original's events up to the fork point, emitted before the fork goes on."""
        self.forked = forked
        """A fork's marker (`RunResumed` with `forked_from`), emitted after the prelude; `None` for other runs."""
        self.model_name = state.model.name
        self._state = state
        self._executor = executor
        self._template = template
        self._log = log
        self._result: RunResult | None = None
        self._next: Run | None = None
        """The segment `resume()` started from this one (at most one)."""
        self._stop_requested = False
        self._started = False
        self._loop = asyncio.get_running_loop()
        self._task = self._loop.create_task(self._main(), name=f"agentcell-run-{self.run_id}")

    @property
    def template(self) -> Template:
        """The compiled template this run runs (a fork of it runs the same)."""
        return self._template

    @property
    def log(self) -> EventLog:
        """This segment's event log: every event so far, for readers that keep a cursor (the widget)."""
        return self._log

    @property
    def transcript(self) -> Transcript:
        """The run's state as every view shows it (slots, rounds, answers with retractions applied), live.

        Resumed segments reduce into the same transcript, each from its own log: read it from the latest."""
        return self._next.transcript if self._next is not None else self._log.transcript

    @property
    def usage(self) -> Usage:
        """The run's usage so far, every segment included, as its events announced it (the transcript's
        totals without reducing the transcript: a batch reads every running row's on each progress update)."""
        return self._next.usage if self._next is not None else self._state.usage.reported

    @property
    def status(self) -> LiveStatus:
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
    def lesson(self) -> LessonControls | None:
        """Lesson mode's controls (`step`, `go`, `predict`, `paused`), `None` when the run was not started with any."""
        return self._state.lesson

    @property
    def exception(self) -> BaseException | None:
        """The unexpected exception that failed the run, for a traceback where a person is watching."""
        return self._executor.exception

    def done(self) -> bool:
        return self._result is not None

    def cancel(self) -> None:
        """Stop the run. Safe from any thread (e.g. a widget's comm handler) and at any time, also after the
        run ended or its loop closed; repeated calls are ignored."""
        if self._result is not None or self._loop.is_closed():
            return  # nothing left to stop (call_soon_threadsafe on a closed loop raises)
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            self._cancel_now()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed between the check and the call
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

    def add_done_callback(self, fn: Callable[[Run], None]) -> None:
        """Call `fn(self)` on the run's loop once the run has ended: no task of the caller's waits for it
        (a batch starts its next row from here). `result` is set then, unless the run's task was cancelled
        from outside before its first step (a loop shutting down), which leaves it `None`."""
        self._task.add_done_callback(lambda _task: fn(self))

    def events(self) -> AsyncIterator[Event]:
        """Every event of the run from the first, ending after `ProcessingComplete`."""
        return self._log.follow()

    def listen(self, listener: Callable[[Event], None]) -> None:
        """Call `listener(event)` for every event from the first, synchronously as each is emitted (no task
        switch per event). It must be quick and must not raise; `unlisten` it when done."""
        self._log.listen(listener)

    def unlisten(self, listener: Callable[[Event], None]) -> None:
        self._log.unlisten(listener)

    def resume(self) -> Run:
        """Go on with a stopped (or failed) run as its next segment, a new `Run` with the same run id.

        Finished slots keep their values and are not run again; the stopped slot starts again from
        its last finished tool round (its partial answer text is discarded and written anew). Usage
        totals carry over, so the new segment's `RunResult.usage` covers the whole run.

        Raises:
            AgentcellError: the run is still going, completed, was halted by a guard, or was already resumed.
        """
        if self._result is None:
            raise AgentcellError(f"run {self.run_id} is still going; stop it (run.cancel()) before resuming")
        if self._next is not None:  # two next segments would write one journal and one transcript
            raise AgentcellError(
                f"run {self.run_id} segment {self.segment} was already resumed as segment {self._next.segment}; "
                "resume that one instead"
            )
        self._next = self._relaunch(self._result, self.transcript)
        return self._next

    async def _main(self) -> None:
        self._started = True
        try:
            self._state.emit(self._run_started())
            if self.segment > 1:
                self._state.emit(self._run_resumed())
            for event in self._prelude:  # a fork: what it keeps of its original, shown as it happened
                self._state.emit(event)
            if self.forked is not None:
                self._state.emit(self.forked)
            if self._state.journal is not None:
                self._state.journal.history(self._executor.history)
            for note in self._notes:
                self._state.warn(None, note)
            for warning in self._template.warnings:
                self._state.warn(None, warning.message)
            if self._stop_requested:
                self._task.cancel()  # lands at the executor's first await, inside its handling
            model = self._state.model
            async with model.model if model.owned else nullcontext():  # closes the HTTP client a string's model owns
                await self._executor.run()
            self._result = self._build_result()
        finally:
            if self._result is None:  # a bug in the engine itself: readers must still see an ending
                self._result = RunResult(run_id=self.run_id, status="failed", error="agentcell internal error")
            if self._state.lesson is not None:
                self._state.lesson.ended()
            self._state.emit(
                ProcessingComplete(
                    run_id=self.run_id,
                    status=self._result.status,
                    result=self._result,
                    early_termination=self._executor.early_termination,
                )
            )

    def _run_started(self) -> RunStarted:
        slots = _slot_infos(self._template)
        return RunStarted(
            run_id=self.run_id,
            model=self._state.model.name,
            offline=self._state.model.offline,
            offline_chosen=self._state.model.offline and self._state.model.chosen,
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
        answers = list(dict.fromkeys(ex.answer_keys))  # the answer slots run (or started), in order
        slot_messages = {key: state.transcript[key] for key in answers if key in state.transcript}
        messages = (*ex.history, *(m for key in answers for m in slot_messages.get(key, ())))
        last = [spec.name for spec in self._template.slots if spec.type not in ("halt", "action")]
        return RunResult(
            run_id=self.run_id,
            status=ex.status,
            results=dict(ex.results),
            answer=ex.results.get(last[-1]) if last else None,
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
            reference_time=state.reference_time.isoformat(),
            forked_from=None if self.forked is None else self.forked.forked_from,
            fork_round=None if self.forked is None else self.forked.fork_round,
            edited=() if self.forked is None else self.forked.edited,
            predictions=tuple(p.as_dict() for p in state.lesson.predictions) if state.lesson is not None else (),
        )


_SLOT_INFOS: list[tuple[Template, tuple[SlotInfo, ...]]] = []
"""The last template (held, so its id is not reused) and its slots as `RunStarted` lists them."""


def _slot_infos(template: Template) -> tuple[SlotInfo, ...]:
    """`template`'s slots as `RunStarted` carries them, made once per template (a batch's rows share theirs)."""
    last = _SLOT_INFOS[0] if _SLOT_INFOS else None
    if last is not None and last[0] is template:
        return last[1]
    infos = tuple(SlotInfo(name=s.name, type=s.type_label, required=s.required) for s in template.slots)
    _SLOT_INFOS[:] = [(template, infos)]
    return infos
