"""Walking a template's steps: checkpoints, guards launched beside the run, slots and actions in order.

`Executor.run()` never raises for anything a run can end with (stop, trip, budget, error); it
records how the run ended so the runner can always emit exactly one `ProcessingComplete`. The
structured steps (`{% if %}`, `{% for %}`, `<together>`, carried text) are walked in `flow.py`.

What a slot sees: the conversation of its segment (the run's `history=` first, then the segment's
`<header>` as a user turn), the text carried into it (`TextStep`s since the last slot), then its own
turns. Its value joins the context under its name; in a loop, under the loop's list (`flow.py`).
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
from ..template.program import CheckpointStep, RenderedSlot, SlotStep, Step, Template, Turn, join_turns
from ..template.render import SlotRenderer
from ..template.render_limits import RENDER_SECONDS, cancel_flag
from .actions import ActionOutcome, BreakRun, run_action
from .contain import describe, stop_requested
from .conversation import answered, turn_messages, with_header
from .flow import Flow
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
    A prompt of plain names bound to builtin scalars runs no user code and is small: it renders here,
    without the hop (`template/inline.py`).
    """
    if isinstance(step.render, SlotRenderer) and step.render.renders_inline(namespace):
        return step.render(namespace)
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


class Executor(Flow):
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
        super().__init__()
        self._state = state
        self._template = template
        self._context = dict(context)
        self.history = tuple(history)
        self._messages: list[ModelMessage] = list(history)
        self._answers: list[tuple[Sequence[Turn], str]] = []
        """Answered slots (turns, answer text) not made messages yet (`_conversation`): a batch row's one slot never
        is, and a slot's turns and answer made as pydantic-ai messages cost more than the rest of its bookkeeping."""
        self._segment_start = len(history)
        """Where the current segment's conversation starts (its `<header>` goes there)."""
        self._resume = resume
        self._replaying = resume is not None
        """True while walking the steps a resumed segment keeps (nothing is emitted for them)."""
        self.results: dict[str, Any] = {}
        self.answer_keys: list[str] = []
        """Event keys of the answer slots started, in order (their messages make the run's conversation)."""
        self.status: RunStatus = "completed"
        self.error: str | None = None
        self.exception: BaseException | None = None
        self.early_termination = False
        self._counter = 0

    async def run(self) -> None:
        """Run every step, then join the guards; record how the run ended."""
        try:
            try:
                await self.steps(self._template.steps)
            except BreakRun as stop:
                self._state.warn(None, str(stop))
                self.early_termination = True
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

    async def steps(self, steps: Sequence[Step]) -> None:
        for step in steps:
            await asyncio.sleep(0)  # a cancellation point between steps, and lets consumers catch up
            await self.step(step)

    @property
    def _conversation(self) -> list[ModelMessage]:
        """The conversation so far: what later slots see (the answered slots' messages made when first needed)."""
        if self._answers:
            for turns, text in self._answers:
                self._messages.extend(answered(turns, text))
            self._answers.clear()
        return self._messages

    def checkpoint(self, step: CheckpointStep) -> None:
        self._messages, self._segment_start, self.carry = [], 0, ()
        self._answers.clear()
        if not self._replaying:
            self._state.emit(CheckpointReached(run_id=self._state.run_id, name=step.name))

    def next_index(self) -> int:
        self._counter += 1
        return self._counter - 1

    async def slot(self, step: SlotStep) -> None:
        spec, key = step.slot, self.key_of(step.slot)
        index = self.next_index()
        rendered = self.carried(await self.render(step))
        if self._kept(step, key, rendered):
            return
        if spec.type == "halt":
            self._launch_guard(step, key, index, rendered, list(self._conversation))
            return
        if spec.type == "action":
            done = await run_action(self._state, spec, key, index, rendered, self.namespace())
            self.record(spec.name, done.value)
            self._conversation.extend(action_messages(rendered.turns, done))
            done.stop_if_break()
            return
        earlier = self._resume.slot_messages.get(key, ()) if self._resume is not None else ()
        history = self.history_for(rendered)
        self.answer_keys.append(key)
        outcome = await run_slot(self._state, spec, index, rendered, history, resume=resumable(earlier), key=key)
        self.answered(spec.name, key, outcome.value)
        self._answers.append((rendered.turns, outcome.text))  # made messages when a later step reads them

    def answered(self, name: str, key: str, value: Any) -> None:
        self.record(name, value)
        if key not in self.answer_keys:
            self.answer_keys.append(key)

    def carried(self, rendered: RenderedSlot) -> RenderedSlot:
        """`rendered` with the text carried into it (from `TextStep`s) before its own turns."""
        if not self.carry:
            return rendered
        turns, self.carry = join_turns(self.carry, rendered.turns), ()
        return RenderedSlot(system=rendered.system, header=rendered.header, turns=turns, options=rendered.options)

    def history_for(self, rendered: RenderedSlot, base: Sequence[ModelMessage] | None = None) -> list[ModelMessage]:
        """The messages before a slot's own turns: the conversation with the segment's header in it."""
        conversation = self._conversation if base is None else base
        return with_header(conversation, rendered.header, self._segment_start)

    def _kept(self, step: SlotStep, key: str, rendered: RenderedSlot) -> bool:
        """On resume: a slot that finished in an earlier segment keeps its value and is not run again."""
        spec = step.slot
        found, value = self.kept_value(spec.name)
        if not self._replaying or not found:
            self._replaying = False
            return False
        self.record(spec.name, value)
        if spec.type not in ("halt", "action"):
            self.answer_keys.append(key)
            self._state.transcript[key] = tuple(self._resume.slot_messages.get(key, ())) if self._resume else ()
            self._conversation.extend(answered(rendered.turns, answer_text(value)))
        return True

    def kept_value(self, name: str) -> tuple[bool, Any]:
        """Whether the stopped segment finished this run of a slot, and its value."""
        results = self._resume.results if self._resume is not None else {}
        if name not in results:
            return False, None
        value = results[name]
        for frame in (f for f in self.frames if name in f.lists):  # in a loop: this iteration's answer
            if not isinstance(value, list) or frame.index >= len(value):
                return False, None
            value = value[frame.index]
        return True, value

    async def render(self, step: SlotStep) -> RenderedSlot:
        """Render with the values known now; a render that needs a pending guard's value joins it."""
        guards = self._state.guards
        pending = guards.pending_names
        if pending:
            try:
                return await render_off_loop(step, self.namespace(exclude=pending))
            except AgentcellError:
                await guards.join()
        return await render_off_loop(step, self.namespace())

    def namespace(self, *, exclude: frozenset[str] = frozenset()) -> dict[str, Any]:
        values = {**self._context, **self.results, **self.frame_values()}
        if not exclude:
            return values
        return {key: value for key, value in values.items() if key not in exclude}

    def _launch_guard(
        self, step: SlotStep, key: str, index: int, rendered: RenderedSlot, conversation: list[ModelMessage]
    ) -> None:
        guard = step.slot
        history = self.history_for(rendered, conversation)  # the guard's own turns stay out of the shared one

        async def verdict() -> Verdict:
            outcome = await run_slot(self._state, guard, index, rendered, history, key=key)
            self.results[guard.name] = outcome.value
            triggered = bool(outcome.value["triggered"])
            return Verdict(
                triggered=triggered,
                reason=str(outcome.value["reason"]),
                tripped=triggered == rendered.options.when,
            )

        self._state.guards.launch(key, verdict(), self.results)

    # -- what flow.py needs ---------------------------------------------------------------------
    @property
    def state(self) -> RunState:
        return self._state

    @property
    def conversation(self) -> list[ModelMessage]:
        return self._conversation

    def guard(self, step: SlotStep, key: str, index: int, rendered: RenderedSlot) -> None:
        self._launch_guard(step, key, index, rendered, list(self._conversation))


def action_messages(turns: Sequence[Turn], outcome: ActionOutcome) -> list[ModelMessage]:
    """What an action adds to the conversation: the text above it, then its result in its role."""
    added = [*turns]
    added.extend(outcome.turns)
    return turn_messages([turn for turn in added if turn.text])
