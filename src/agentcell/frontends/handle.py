"""A run started from a notebook: the task on the kernel's loop, its widget, and the handle users hold.

`launch` is where a notebook run meets the kernel's loop: the engine's `start_run` creates the run's
task there, `launch` adds the task that feeds the widget, and a `RunRegistry` keeps strong
references to both (re-running a cell stops that cell's previous run).
`RunHandle.cancel()` is thread-safe (`loop.call_soon_threadsafe`) because a Stop click can arrive on
a kernel subshell thread. `await handle` in a later cell gives the `RunResult`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Mapping
from typing import Any

from pydantic_ai.messages import ModelMessage

from ..engine import Run
from ..errors import AgentcellError
from ..events import Event, ProcessingComplete, RunWarning, Usage
from ..loops import running_loop, wait_on
from ..options import ApproveCallback, RunOptions
from ..result import FORKERS, RunResult
from ..transcript import Transcript
from ..usage import LiveStatus
from .approvals import WidgetApprovals
from .launch import LaunchSpec, start
from .lesson_handle import LessonHandle
from .registry import RunRegistry
from .widget.widget import AgentWidget

REPLACED = "replaced by a newer run: this one was stopped"
"""What a replaced run's view says (a re-run cell, or `show()` again with the same `key=`)."""


class RunHandle(LessonHandle):
    """What `%%agent -o NAME` binds: awaitable, cancellable from any thread, readable while running.

    It wraps the engine's `Run` (which owns the run's task) and a consumer task that feeds the
    widget. `cancel()` stops the run; the consumer then drains the run's final events, so the
    widget always shows `stopped` with the partial answer kept.
    """

    def __init__(self, run: Run, *, widget: AgentWidget | None, loop: asyncio.AbstractEventLoop) -> None:
        self.run = run
        self.run_id = run.run_id
        self.widget = widget
        self.loop = loop
        self.task: asyncio.Task[None] | None = None
        self.superseded = False
        """Whether a newer run from the same place replaced (and stopped) this one."""
        self.forks: list[RunHandle] = []
        """The forks started from this run (`fork()`, the view's "edit and re-run from here"), oldest first."""
        self._watchers: list[Callable[[Event], None]] = []

    # ---- reading ---------------------------------------------------------------------------
    @property
    def status(self) -> LiveStatus:
        """`running` until the run ends, then the `RunResult.status`."""
        return self.run.status

    @property
    def done(self) -> bool:
        return self.run.done()

    def result(self) -> RunResult:
        """The finished run's result; raises if it is still running (use `await handle`)."""
        result = self.run.result
        if result is None:
            raise RuntimeError("the run is still going; `await` the handle or check `.status`")
        return result

    @property
    def transcript(self) -> Transcript:
        """The run as every view shows it (the engine's one reducer), live."""
        return self.run.transcript

    @property
    def results(self) -> Mapping[str, Any]:
        """Slot values so far (all of them once the run ended)."""
        result = self.run.result
        return result.results if result is not None else self.run.transcript.results

    @property
    def answer(self) -> Any:
        """The last slot's value; after a stop (or while running) the answer text shown so far.

        Mid-run this is the text the view shows as the answer: narration the engine retracted (text
        the model streamed before it went on to call tools) is not part of it.
        """
        result = self.run.result
        if result is not None:
            if result.answer is not None or not result.partial:
                return result.answer
            return list(result.partial.values())[-1]
        return self.partial

    @property
    def partial(self) -> str | None:
        """The answer text of the slot streaming now (or that streamed last), or `None` before any."""
        partial = self.run.transcript.partial
        return list(partial.values())[-1] if partial else None

    @property
    def usage(self) -> Usage:
        """Totals so far (the whole run's once it ended)."""
        result = self.run.result
        if result is not None:
            return result.usage
        return self.run.transcript.usage

    @property
    def messages(self) -> tuple[ModelMessage, ...]:
        return self.result().messages

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.result().warnings

    def to_openai(self) -> list[dict[str, Any]]:
        return self.result().to_openai()

    def to_json(self) -> str:
        return self.result().to_json()

    # ---- forking ---------------------------------------------------------------------------
    def fork(
        self,
        round: int,
        *,
        slot: str | None = None,
        tool_results: Mapping[str, Any] | None = None,
        message: str | None = None,
        model: Any = None,
        quiet: bool = False,
        **options: Any,
    ) -> RunHandle:
        """`RunResult.fork` of this finished (or stopped) run, shown live: returns the fork's handle.

        In a notebook the fork's widget is displayed where this is called (the view's button shows it
        below this run's view); `quiet=True` shows none. Raises `ForkError` (one sentence) for a round,
        slot or call id the run does not have, `AgentcellError` while the run is still going.
        """
        if self.run.result is None:
            raise AgentcellError(f"run {self.run_id} is still going; stop it or wait for it before forking")
        handle = fork_shown(self.run.result, round, slot=slot, tool_results=tool_results, message=message,
                            model=model, quiet=quiet or self.widget is None, **options)
        self.forks.append(handle)
        return handle

    def fork_from_view(self, request: Mapping[str, Any]) -> None:
        """The view's "edit and re-run from here": a new tool result (`call_id`) or user message (`slot`).

        The fork is shown below this run's view; a request the run cannot honour is said in the view.
        """
        assert self.widget is not None
        widget = self.widget
        value = str(request.get("value", ""))
        try:
            if request.get("call_id") is not None:
                slot, round_no = _round_of_call(self.result(), str(request["call_id"]))
                widget.in_cell(lambda: self.fork(round_no, slot=slot, tool_results={str(request["call_id"]): value}))
            else:
                widget.in_cell(lambda: self.fork(0, slot=str(request.get("slot")), message=value))
        except AgentcellError as exc:
            widget.note(f"could not fork: {exc}", run_id=self.run_id)

    # ---- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the run. Safe from any thread (Stop clicks may arrive on a kernel subshell thread)."""
        self.run.cancel()

    def supersede(self) -> None:
        """Stop the run because a newer run from the same cell or `key=` replaced it; its view says so.

        `RunRegistry.add` calls it where the newer run starts; from another loop's thread (a cell re-run
        in a kernel subshell) the work is passed to this run's own loop, which owns its view.
        """
        if self.done or self.loop.is_closed():
            return
        if running_loop() is not self.loop:
            self.loop.call_soon_threadsafe(self.supersede)
            return
        self.superseded = True
        if self.widget is not None:  # the view's own message: the run did not say it, so it is not in its log
            self.widget.note(REPLACED, run_id=self.run_id)
        warning = RunWarning(run_id=self.run_id, slot=None, message=REPLACED)
        for fn in self._watchers:
            fn(warning)
        self.cancel()

    def __await__(self) -> Generator[Any, None, RunResult]:
        return self._wait().__await__()

    async def _wait(self) -> RunResult:
        result = self.run.result
        if result is not None and (self.task is None or self.task.done()):
            return result  # ended and shown: no loop needed (its own may have stopped since)
        return await wait_on(self.loop, self._wait_here, what="this run")

    async def _wait_here(self) -> RunResult:
        result = await self.run.wait()
        if self.task is not None:
            await asyncio.shield(self.task)  # the widget has shown the end too
        return result

    def watch(self, fn: Callable[[Event], None]) -> None:
        """Call `fn(event)` for every later event (printers, tests)."""
        self._watchers.append(fn)

    def __repr__(self) -> str:
        return f"<agentcell run {self.run_id} status={self.status!r}>"

    # ---- the consumer task -----------------------------------------------------------------
    async def consume(self) -> None:
        """Tell the widget and watchers of every event; the one boundary where a person watches.

        The widget reads the run's log itself (`AgentWidget.follow`); it is told of each event as the run
        emits it (`Run.listen`, synchronously: no task switch and no wake-up per streamed text), to schedule
        a batch. This task only waits for the end, so cancelling it (e.g. the kernel shuts down) still stops
        the run.
        """
        ended: asyncio.Future[None] = self.loop.create_future()

        def show(event: Event) -> None:
            if ended.done():
                return
            try:
                self._show(event)
            except Exception as exc:  # a bug in a consumer must not leave the run going unseen
                self.run.unlisten(show)
                ended.set_exception(exc)
                self.run.cancel()
                if self.widget is not None:
                    self.widget.fail(f"agentcell could not show this run: {type(exc).__name__}: {exc}")
                return
            if isinstance(event, ProcessingComplete):
                ended.set_result(None)

        self.run.listen(show)
        try:
            await ended
        except asyncio.CancelledError:
            self.run.cancel()  # the consumer was cancelled (e.g. the kernel shuts down): stop the run too
            raise
        finally:
            self.run.unlisten(show)

    def _show(self, event: Event) -> None:
        if self.widget is not None:
            self.widget.notify(event)
        for fn in self._watchers:
            fn(event)


def fork_shown(
    original: RunResult,
    round: int,
    *,
    slot: str | None = None,
    tool_results: Mapping[str, Any] | None = None,
    message: str | None = None,
    model: Any = None,
    quiet: bool = False,
    **options: Any,
) -> RunHandle:
    """`original.fork(...)` started as a front end's run: a handle, and (unless `quiet`) its widget shown here.

    Raises what `RunResult.fork` raises (`ForkError`, one sentence), before anything is shown.
    """
    from ..engine import fork_run
    from ..engine.fork import recent_run
    from .launch import LaunchSpec

    kept = recent_run(original.run_id)

    def starter(approve: ApproveCallback | None) -> Run:
        extra = dict(options) if approve is None else {**options, "approve": approve}
        return fork_run(original, round, slot=slot, tool_results=tool_results, message=message, model=model, **extra)

    if kept is None:  # not a run of this process: the engine says so in its words
        starter(None)
    spec = LaunchSpec(template=kept[0].template if kept else None, options=RunOptions(),  # type: ignore[arg-type]
                      quiet=quiet)
    handle = launch(spec, starter=starter)
    if handle.widget is not None:
        from .fork_compare import offer_comparison

        offer_comparison(handle, original)
        handle.widget.show()
    return handle


def fork_result(
    original: RunResult,
    round: int,
    *,
    slot: str | None = None,
    tool_results: Mapping[str, Any] | None = None,
    message: str | None = None,
    model: Any = None,
    **options: Any,
) -> Any:
    """`RunResult.fork` once a front end is loaded: a run whose approvals its view answered forks with a view.

    The original's Approve / Deny buttons answer only the original, so a fork of such a run (say of a
    `--approve writes` cell's result) is started like `RunHandle.fork`: shown where it is called, with buttons
    of its own, and its `RunHandle` returned (awaitable like the engine's `Run`). Any other run, or an explicit
    `approve=`, forks in the engine as before.
    """
    from ..engine import fork_run
    from ..engine.fork import recent_run

    kept = recent_run(original.run_id)
    setup_options = getattr(kept[0], "options", None) if kept is not None else None
    if "approve" not in options and isinstance(getattr(setup_options, "approve", None), WidgetApprovals):
        return fork_shown(original, round, slot=slot, tool_results=tool_results, message=message, model=model,
                          **options)
    return fork_run(original, round, slot=slot, tool_results=tool_results, message=message, model=model, **options)


FORKERS.insert(0, fork_result)


def _round_of_call(result: RunResult, call_id: str) -> tuple[str, int]:
    """The answer slot and round (its model response's number) of the tool call `call_id`."""
    from pydantic_ai.messages import ModelResponse, ToolCallPart

    for slot, messages in result.slot_messages.items():
        responses = [m for m in messages if isinstance(m, ModelResponse)]
        for number, response in enumerate(responses, start=1):
            if any(isinstance(p, ToolCallPart) and p.tool_call_id == call_id for p in response.parts):
                return slot, number
    from ..errors import ForkError

    raise ForkError(f"run {result.run_id} has no tool call {call_id!r}")


def launch(
    spec: LaunchSpec,
    *,
    registry: RunRegistry | None = None,
    generation: object = None,
    starter: Callable[[ApproveCallback | None], Run] | None = None,
) -> RunHandle:
    """Start the run as a task on the running loop (the kernel's) and return its handle at once.

    With a `registry`, the run is kept there and replaces the runs `spec.key` started before (those of
    the same `generation`, one execution of a cell, are left alone; see `RunRegistry.add`).

    `starter` starts the run instead of the spec's options (a fork); it gets the widget's approval callback.

    Raises (before any model call) whatever the engine's `start_run` raises: template, tool and
    model configuration errors.
    """
    loop = asyncio.get_running_loop()
    provenance = {"template_sha256": spec.template.sha256, "template_name": spec.template.name}
    origin = "%%agent" if spec.hints == "cell" else "agentcell"
    view = None if spec.quiet else AgentWidget(hint=spec.hint, provenance=provenance, origin=origin)
    approvals = WidgetApprovals(loop) if view is not None else None
    run = start(spec, approve=approvals) if starter is None else starter(approvals)
    handle = RunHandle(run, widget=view, loop=loop)
    if view is not None:
        assert approvals is not None
        view.bind(loop=loop, on_stop=handle.cancel, on_approve=approvals.resolve, on_fork=handle.fork_from_view)
        view.follow(run.log)
        if run.lesson is not None:
            view.on_lesson = handle.lesson_message
    handle.task = loop.create_task(handle.consume(), name=f"agentcell-view-{run.run_id}")
    if registry is not None:
        registry.add(handle, place=spec.key, generation=generation)
    return handle
