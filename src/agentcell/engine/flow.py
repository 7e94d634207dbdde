"""The structured steps: carried text, slots under `{% if %}` / `{% for %}`, and `<together>` blocks.

* `TextStep`: its turns are carried into the prompt of the next slot the run reaches.
* `IfStep`: the first branch whose test holds (decided now, so it may read earlier slots) runs; the
  slots of the others are set to `None` and reported as skipped.
* `ForStep`: the body runs once per item with the loop variables (and `loop.index`, `loop.first`,
  …) set; each slot in it runs once per item (events name the run `summary[0]`, `summary[1]`, …) and
  its value is the list of answers in iteration order. Inside an iteration, after it is answered, the
  name is that iteration's answer. A stop keeps the answers so far.
* `TogetherStep`: the slots run concurrently, each on the conversation so far plus the carried text
  and its own question; no slot sees a sibling's answer. The results join the conversation in source
  order (the carried text once, then each question and answer). Stop cancels all of them; when one
  fails, the others still finish and keep their values, then the run ends with the first failure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, assert_never

from pydantic_ai.messages import ModelMessage

from ..events import SlotCompleted
from ..template.program import (
    CheckpointStep,
    ForStep,
    IfStep,
    RenderedSlot,
    SlotSpec,
    SlotStep,
    Step,
    TextStep,
    TogetherStep,
    Turn,
    join_turns,
)
from .actions import run_action
from .conversation import answered, turn_messages
from .slot import answer_text, run_slot
from .state import RunState

SKIPPED = "(skipped: its {% if %} branch did not hold)"


@dataclass(frozen=True, slots=True)
class LoopInfo:
    """`loop` inside a `{% for %}` that holds slots (the fields Jinja's own `loop` has)."""

    index0: int
    length: int

    @property
    def index(self) -> int:
        return self.index0 + 1

    @property
    def first(self) -> bool:
        return self.index0 == 0

    @property
    def last(self) -> bool:
        return self.index0 == self.length - 1

    @property
    def revindex(self) -> int:
        return self.length - self.index0


@dataclass(slots=True)
class Frame:
    """One iteration of a loop: its variables, and the answers its slots collect."""

    index: int
    values: dict[str, Any]
    lists: dict[str, list[Any]] = field(default_factory=dict)


class Flow:
    """The walking of structured steps; `Executor` provides the slot runs and the conversation."""

    def __init__(self) -> None:
        self.carry: tuple[Turn, ...] = ()
        """Turns of `TextStep`s that the next slot reached takes into its prompt."""
        self.frames: list[Frame] = []
        self.results: dict[str, Any] = {}
        self.answer_keys: list[str] = []

    # Provided by Executor.
    @property
    def state(self) -> RunState:
        raise NotImplementedError

    @property
    def conversation(self) -> list[ModelMessage]:
        raise NotImplementedError

    async def steps(self, steps: Sequence[Step]) -> None:
        raise NotImplementedError

    async def slot(self, step: SlotStep) -> None:
        raise NotImplementedError

    def checkpoint(self, step: CheckpointStep) -> None:
        raise NotImplementedError

    async def render(self, step: SlotStep) -> RenderedSlot:
        raise NotImplementedError

    def namespace(self, *, exclude: frozenset[str] = frozenset()) -> dict[str, Any]:
        raise NotImplementedError

    def history_for(self, rendered: RenderedSlot, base: Sequence[ModelMessage] | None = None) -> list[ModelMessage]:
        raise NotImplementedError

    def next_index(self) -> int:
        raise NotImplementedError

    def answered(self, name: str, key: str, value: Any) -> None:
        raise NotImplementedError

    def guard(self, step: SlotStep, key: str, index: int, rendered: RenderedSlot) -> None:
        raise NotImplementedError

    # -- dispatch -------------------------------------------------------------------------------
    async def step(self, step: Step) -> None:
        match step:
            case SlotStep():
                await self.slot(step)
            case CheckpointStep():
                self.checkpoint(step)
            case TextStep():
                self.carry = join_turns(self.carry, step.render(self.namespace()))
            case IfStep():
                await self.if_step(step)
            case ForStep():
                await self.for_step(step)
            case TogetherStep():
                await self.together(step)
            case _:
                assert_never(step)

    # -- values ---------------------------------------------------------------------------------
    def record(self, name: str, value: Any) -> None:
        """A slot's answer: into the innermost loop that collects it, else into the results."""
        frame = next((f for f in reversed(self.frames) if name in f.lists), None) if self.frames else None
        if frame is None:
            self.results[name] = value
        else:
            frame.lists[name].append(value)
            frame.values[name] = value  # the rest of this iteration reads this iteration's answer

    def frame_values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for frame in self.frames:
            values.update(frame.values)
        return values

    def key_of(self, spec: SlotSpec) -> str:
        """The name events use for this run of `spec`: `x`, `x#2` after a checkpoint, `x[0]` in a loop."""
        if not self.frames:
            return spec.key
        return spec.key + "".join(f"[{f.index}]" for f in self.frames if spec.name in f.lists)

    def key_of_name(self, name: str) -> str:
        return name + "".join(f"[{f.index}]" for f in self.frames if name in f.lists)

    # -- {% if %} -------------------------------------------------------------------------------
    async def if_step(self, step: IfStep) -> None:
        namespace = self.namespace()
        chosen = next((b for b in step.branches if b.test is None or b.test(namespace)), None)
        ran = {s.slot.name for s in _slot_steps(chosen.steps)} if chosen is not None else set()
        for name in step.slots:
            if name not in ran:
                self.record(name, None)
                key = self.key_of_name(name)
                self.state.emit(SlotCompleted(run_id=self.state.run_id, slot=key, value=None, text=SKIPPED))
        if chosen is not None:
            await self.steps(chosen.steps)

    # -- {% for %} ------------------------------------------------------------------------------
    async def for_step(self, step: ForStep) -> None:
        bindings = step.items(self.namespace())
        lists: dict[str, list[Any]] = {name: [] for name in step.slots}
        try:
            for index, binding in enumerate(bindings):
                frame = Frame(index, {**binding, "loop": LoopInfo(index, len(bindings))}, lists)
                self.frames.append(frame)
                try:
                    await self.steps(step.steps)
                finally:
                    self.frames.pop()
            if not bindings:
                await self.steps(step.empty)
        finally:
            for name, values in lists.items():  # a stop keeps the answers so far
                self.record(name, list(values))
        for name, values in lists.items():
            key = self.key_of_name(name)
            text = answer_text(values)
            self.state.emit(SlotCompleted(run_id=self.state.run_id, slot=key, value=list(values), text=text))

    # -- <together> -----------------------------------------------------------------------------
    async def together(self, step: TogetherStep) -> None:
        carried, self.carry = self.carry, ()
        members = [(member, self.key_of(member.slot), self.next_index(), await self.render(member))
                   for member in step.steps]  # fmt: skip
        base = list(self.conversation)
        namespace = self.namespace()
        runs = []
        for member, key, index, own in members:
            rendered = _with_turns(own, join_turns(carried, own.turns))
            if member.slot.type == "halt":
                self.guard(member, key, index, rendered)
                continue
            if member.slot.type != "action":
                self.answer_keys.append(key)
            runs.append((member, key, own, self._member(member, key, index, rendered, own.turns, base, namespace)))
        outcomes = await asyncio.gather(*(run for *_, run in runs), return_exceptions=True)
        self.conversation.extend(turn_messages([turn for turn in carried if turn.text]))
        failure: BaseException | None = None
        for (member, key, _own, _), outcome in zip(runs, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failure = failure or outcome
                continue
            value, messages = outcome
            if member.slot.type == "action":
                self.record(member.slot.name, value)
            else:
                self.answered(member.slot.name, key, value)
            self.conversation.extend(messages)
        if failure is not None:
            raise failure

    async def _member(
        self,
        member: SlotStep,
        key: str,
        index: int,
        rendered: RenderedSlot,
        own: Sequence[Turn],
        base: list[ModelMessage],
        namespace: dict[str, Any],
    ) -> tuple[Any, list[ModelMessage]]:
        """Run one member of a `<together>` block: its value and what it adds to the conversation."""
        if member.slot.type == "action":
            outcome = await run_action(self.state, member.slot, key, index, rendered, namespace)
            return outcome.value, turn_messages([turn for turn in (*own, *outcome.turns) if turn.text])
        history = self.history_for(rendered, base)
        result = await run_slot(self.state, member.slot, index, rendered, history, key=key)
        return result.value, answered(own, result.text)


def _with_turns(rendered: RenderedSlot, turns: tuple[Turn, ...]) -> RenderedSlot:
    return RenderedSlot(system=rendered.system, header=rendered.header, turns=turns, options=rendered.options)


def _slot_steps(steps: Sequence[Step]) -> list[SlotStep]:
    """Every slot step in `steps`, nested ones included."""
    found: list[SlotStep] = []
    for step in steps:
        match step:
            case SlotStep():
                found.append(step)
            case TogetherStep():
                found.extend(step.steps)
            case IfStep():
                for branch in step.branches:
                    found.extend(_slot_steps(branch.steps))
            case ForStep():
                found.extend(_slot_steps(step.steps))
                found.extend(_slot_steps(step.empty))
            case CheckpointStep() | TextStep():
                pass
            case _:
                assert_never(step)
    return found
