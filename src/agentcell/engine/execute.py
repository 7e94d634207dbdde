"""Walking a template's steps: checkpoints, guards launched beside the run, answer slots in order.

`Executor.run()` never raises for anything a run can end with (stop, trip, budget, error); it
records how the run ended so the runner can always emit exactly one `ProcessingComplete`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread
from pydantic_ai.messages import ModelMessage

from ..errors import AgentcellError, TemplateRenderError
from ..events import CheckpointReached, RunStatus
from ..template.program import CheckpointStep, RenderedSlot, SlotStep, Template
from ..template.render_limits import RENDER_SECONDS, cancel_flag
from .contain import describe, stop_requested
from .conversation import answered
from .guard import GuardTrip, Verdict
from .slot import answer_text, resumable, run_slot
from .state import RunState, SlotEnded


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumePoint:
    """What a resumed segment keeps from the stopped one."""

    results: Mapping[str, Any] = field(default_factory=dict)
    """Finished slots (guards included): not run again; their answers rebuild the conversation."""
    slot_messages: Mapping[str, tuple[ModelMessage, ...]] = field(default_factory=dict)
    """The stopped slot's finished rounds are taken from here."""


RENDER_GRACE_S = 1.0
"""How long past `RENDER_SECONDS` the engine waits for a render thread before giving up on it."""


async def render_off_loop(step: SlotStep, namespace: dict[str, Any]) -> RenderedSlot:
    """`step.render(namespace)` in a worker thread: a long render (a huge loop, a slow expression) leaves
    the loop and Stop live, and ends in `TemplateRenderError` past the bounds of `render_limits.py`.

    Stop abandons the thread at once; the render itself stops at its next piece (the cancel flag).
    """
    cancel = threading.Event()

    def render() -> RenderedSlot:
        cancel_flag.set(cancel)  # in the thread's own copy of the context
        return step.render(namespace)

    try:
        with anyio.fail_after(RENDER_SECONDS + RENDER_GRACE_S):
            return await anyio.to_thread.run_sync(render, abandon_on_cancel=True)
    except TimeoutError:  # one expression ran past the bound without returning (the budget never saw it)
        raise TemplateRenderError(
            f"cannot render the prompt of [[{step.slot.name}]]: rendering took longer than {RENDER_SECONDS:g} s; "
            "render less or simplify the expressions"
        ) from None
    finally:
        cancel.set()  # a render still going (Stop, the time bound) stops at its next piece


class Executor:
    """Runs one template once; holds the conversation and the results so far."""

    def __init__(
        self,
        state: RunState,
        template: Template,
        context: Mapping[str, Any],
        history: Sequence[ModelMessage],
        *,
        resume: ResumePoint | None = None,
    ) -> None:
        self._state = state
        self._template = template
        self._context = dict(context)
        self.history = tuple(history)
        self._conversation: list[ModelMessage] = list(history)
        self._resume = resume
        self._replaying = resume is not None
        """True while walking the steps a resumed segment keeps (nothing is emitted for them)."""
        self.results: dict[str, Any] = {}
        self.status: RunStatus = "completed"
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.early_termination = False

    async def run(self) -> None:
        """Run every step, then join the guards; record how the run ended."""
        try:
            for index, step in enumerate(self._template.steps):
                await asyncio.sleep(0)  # a cancellation point between steps, and lets consumers catch up
                await self._step(index, step)
            await self._state.guards.join()
        except GuardTrip as trip:
            self._end("halted", str(trip))
            self.results, self.early_termination = trip.results, True
        except SlotEnded as ended:
            self._end("failed" if ended.status == "failed" else "budget_exhausted", ended.message)
        except asyncio.CancelledError as exc:
            if not stop_requested():  # a stray CancelledError from inside the run: a failure, not a Stop
                self._end("failed", f"{describe(exc)} raised inside the run (nobody pressed Stop)")
                self.exception = exc
                return
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()  # the stop was ours to deliver; the run now finishes normally
            self._end("stopped", "stopped")
        except BaseException as exc:  # the run's boundary: every failure (SystemExit too) ends in ProcessingComplete
            self._end("failed", describe(exc))
            self.exception = exc
        finally:
            await self._state.guards.cancel()

    def _end(self, status: RunStatus, error: str) -> None:
        self.status, self.error = status, error

    async def _step(self, index: int, step: CheckpointStep | SlotStep) -> None:
        if isinstance(step, CheckpointStep):
            self._conversation = []
            if not self._replaying:
                self._state.emit(CheckpointReached(run_id=self._state.run_id, name=step.name))
            return
        rendered = await self._render(step)
        if self._kept(step, rendered):
            return
        if step.slot.type == "halt":
            self._launch_guard(step, index, rendered)
            return
        earlier = self._resume.slot_messages.get(step.slot.name, ()) if self._resume is not None else ()
        outcome = await run_slot(
            self._state, step.slot, index, rendered, self._conversation, resume=resumable(earlier)
        )
        self.results[step.slot.name] = outcome.value
        self._conversation.extend(answered(rendered.turns, outcome.text))

    def _kept(self, step: SlotStep, rendered: RenderedSlot) -> bool:
        """On resume: a slot that finished in an earlier segment keeps its value and is not run again."""
        name = step.slot.name
        if not self._replaying or self._resume is None or name not in self._resume.results:
            self._replaying = False
            return False
        value = self.results[name] = self._resume.results[name]
        if step.slot.type != "halt":
            self._state.transcript[name] = tuple(self._resume.slot_messages.get(name, ()))
            self._conversation.extend(answered(rendered.turns, answer_text(value)))
        return True

    async def _render(self, step: SlotStep) -> RenderedSlot:
        """Render with the values known now; a render that needs a pending guard's value joins it."""
        guards = self._state.guards
        pending = guards.pending_names
        if pending:
            try:
                return await render_off_loop(step, self._namespace(exclude=pending))
            except AgentcellError:
                await guards.join()
        return await render_off_loop(step, self._namespace())

    def _namespace(self, *, exclude: frozenset[str] = frozenset()) -> dict[str, Any]:
        values = {**self._context, **self.results}
        return {key: value for key, value in values.items() if key not in exclude}

    def _launch_guard(self, step: SlotStep, index: int, rendered: RenderedSlot) -> None:
        guard = step.slot
        conversation = list(self._conversation)  # the guard's own turns stay out of the shared one

        async def verdict() -> Verdict:
            outcome = await run_slot(self._state, guard, index, rendered, conversation)
            self.results[guard.name] = outcome.value
            triggered = bool(outcome.value["triggered"])
            return Verdict(
                triggered=triggered,
                reason=str(outcome.value["reason"]),
                tripped=triggered == rendered.options.when,
            )

        self._state.guards.launch(guard.name, verdict(), self.results)
