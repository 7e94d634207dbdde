"""A run started from a notebook: the task on the kernel's loop, its widget, and the handle users hold.

`start_run` is the one place agentcell touches the kernel's loop: `loop.create_task(...)`, with a
strong reference kept in a `RunRegistry` (re-running a cell stops that cell's previous run).
`RunHandle.cancel()` is thread-safe (`loop.call_soon_threadsafe`) because a Stop click can arrive on
a kernel subshell thread. `await handle` in a later cell gives the `RunResult`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Mapping, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.usage import UsageLimits

from .events import Event, ProcessingComplete, RunStatus, SlotCompleted, SlotFailed, TokenDelta, Usage, UsageUpdated
from .models import ResolvedModel
from .result import RunResult
from .template.program import Template
from .widget import AgentWidget


class RunHandle:
    """What `%%agent -o NAME` binds: awaitable, cancellable from any thread, readable while running."""

    def __init__(self, *, run_id: str, widget: AgentWidget | None, loop: asyncio.AbstractEventLoop) -> None:
        self.run_id = run_id
        self.widget = widget
        self.loop = loop
        self.task: asyncio.Task[RunResult] | None = None
        self._result: RunResult | None = None
        self._results: dict[str, Any] = {}
        self._partial: dict[str, str] = {}
        self._usage = Usage()
        self._watchers: list[Callable[[Event], None]] = []

    # ---- reading ---------------------------------------------------------------------------
    @property
    def status(self) -> RunStatus | str:
        """`running` until the run ends, then the `RunResult.status`."""
        return "running" if self._result is None else self._result.status

    @property
    def done(self) -> bool:
        return self._result is not None

    def result(self) -> RunResult:
        """The finished run's result; raises if it is still running (use `await handle`)."""
        if self._result is None:
            raise RuntimeError("the run is still going; `await` the handle or check `.status`")
        return self._result

    @property
    def results(self) -> Mapping[str, Any]:
        """Slot values so far (all of them once the run ended)."""
        return self._result.results if self._result is not None else dict(self._results)

    @property
    def answer(self) -> Any:
        """The last slot's value; while running or after a stop, the text streamed so far."""
        if self._result is not None and self._result.answer is not None:
            return self._result.answer
        if self._result is not None and self._result.partial:
            return list(self._result.partial.values())[-1]
        return list(self._partial.values())[-1] if self._partial else None

    @property
    def usage(self) -> Usage:
        return self._result.usage if self._result is not None else self._usage

    @property
    def messages(self) -> tuple[ModelMessage, ...]:
        return self.result().messages

    def to_openai(self) -> list[dict[str, Any]]:
        return self.result().to_openai()

    # ---- control ---------------------------------------------------------------------------
    def cancel(self) -> None:
        """Stop the run. Safe from any thread (Stop clicks may arrive on a kernel subshell thread)."""
        if self.task is not None and not self.task.done():
            self.loop.call_soon_threadsafe(self.task.cancel)

    def __await__(self) -> Generator[Any, None, RunResult]:
        if self.task is None:
            raise RuntimeError("the run was never started")
        # Shielded: cancelling the awaiting cell (Kernel → Interrupt) must not be swallowed here;
        # the --wait mode cancels the run explicitly when it wants to.
        return asyncio.shield(self.task).__await__()

    def watch(self, fn: Callable[[Event], None]) -> None:
        """Call `fn(event)` for every later event (printers, tests)."""
        self._watchers.append(fn)

    def __repr__(self) -> str:
        return f"<agentcell run {self.run_id} status={self.status!r}>"

    # ---- the task --------------------------------------------------------------------------
    async def consume(self, events: AsyncIterator[Event]) -> RunResult:
        """Apply every event of the run; the one boundary where an unexpected failure is shown."""
        try:
            async for event in events:
                self._observe(event)
        except asyncio.CancelledError:
            # The engine normally absorbs a stop and yields its own terminal event; if the stop
            # landed outside it, record the end here so the handle and widget still say `stopped`.
            if self._result is None:
                self._finish(self._fallback_result("stopped", "stopped before the run reported its end"))
            raise
        except Exception as exc:  # the one boundary where a person is watching
            self._finish(self._fallback_result("failed", f"{type(exc).__name__}: {exc}"))
        if self._result is None:
            self._finish(self._fallback_result("failed", "the run ended without a final event"))
        assert self._result is not None
        return self._result

    def _observe(self, event: Event) -> None:
        match event:
            case TokenDelta():
                self._partial[event.slot] = self._partial.get(event.slot, "") + event.text
            case SlotCompleted():
                self._results[event.slot] = event.value
                self._partial.pop(event.slot, None)
            case SlotFailed() if event.partial:
                self._partial[event.slot] = event.partial
            case UsageUpdated():
                self._usage = event.usage
            case _:
                pass
        if self.widget is not None:
            self.widget.apply(event)
        for fn in self._watchers:
            fn(event)
        if isinstance(event, ProcessingComplete):
            self._result = event.result

    def _finish(self, result: RunResult) -> None:
        self._result = result
        if self.widget is not None:
            self.widget.apply(ProcessingComplete(run_id=self.run_id, status=result.status, result=result))

    def _fallback_result(self, status: RunStatus, error: str) -> RunResult:
        return RunResult(run_id=self.run_id, status=status, results=dict(self._results), usage=self._usage,
                         error=error, partial=dict(self._partial))


class RunRegistry:
    """Strong references to background runs, keyed by cell id, so re-running a cell replaces its run."""

    def __init__(self) -> None:
        self.runs: dict[str, RunHandle] = {}

    def add(self, key: str, handle: RunHandle) -> None:
        previous = self.runs.get(key)
        if previous is not None:
            previous.cancel()
        self.runs[key] = handle
        if handle.task is not None:
            handle.task.add_done_callback(lambda _t: self._forget(key, handle))

    def _forget(self, key: str, handle: RunHandle) -> None:
        if self.runs.get(key) is handle:
            del self.runs[key]

    def stop_all(self) -> int:
        """Cancel every run still going; returns how many were asked to stop."""
        live = [h for h in self.runs.values() if not h.done]
        for handle in live:
            handle.cancel()
        return len(live)


def start_run(
    template: Template,
    *,
    context: Mapping[str, Any],
    model: ResolvedModel,
    tools: Sequence[Callable[..., Any]] = (),
    limits: UsageLimits | None = None,
    loop: asyncio.AbstractEventLoop,
    registry: RunRegistry | None = None,
    key: str | None = None,
    widget: bool = True,
) -> RunHandle:
    """Start the run as a task on `loop` (the kernel's running loop) and return its handle at once."""
    from .engine import stream

    run_id = uuid.uuid4().hex[:12]
    view = AgentWidget() if widget else None
    handle = RunHandle(run_id=run_id, widget=view, loop=loop)
    events = stream(template, context=context, model=model.model, tools=tools, limits=limits, run_id=run_id)
    handle.task = loop.create_task(handle.consume(events), name=f"agentcell-{run_id}")
    if view is not None:
        view.bind(loop=loop, on_stop=handle.cancel)
    if registry is not None:
        registry.add(key or run_id, handle)
    return handle


def show(template: Template | str, **kwargs: Any) -> AgentWidget:
    """Start a run on the running loop and return its live widget (marimo, plain Python in a loop)."""
    from .models import resolve_model
    from .template import compile_template

    compiled = compile_template(template) if isinstance(template, str) else template
    handle = start_run(
        compiled,
        context=kwargs.pop("context", {}),
        model=resolve_model(kwargs.pop("model", None)),
        loop=asyncio.get_running_loop(),
        **kwargs,
    )
    assert handle.widget is not None
    return handle.widget
