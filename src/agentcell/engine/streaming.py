"""The event handler of one slot run: pydantic-ai stream events → our events, plus retraction.

pydantic-ai streams prose that precedes a tool call in the same response and never withdraws it
(docs/pydantic-ai.md). We show answer text as it arrives and, when the response turns out to call a
tool, emit `SlotRetracted(reason="gathering")` with that text, which is kept as the round's narration.
Only free-text slots stream; typed slots answer through an output tool and show no tokens.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
)
from pydantic_ai.usage import RunUsage

from ..events import RetractReason, SlotRetracted, ThinkingDelta, TokenDelta, ToolCompleted, ToolStarted
from ..transcript import Pieces
from .budget import OutputMeter
from .coalesce import ShownText
from .contain import PROCESS_EXITS, Escaped
from .state import RunState


class SlotStream:
    """`event_stream_handler` for one slot's agent run; remembers what was shown."""

    def __init__(self, state: RunState, slot: str, *, streams_text: bool) -> None:
        self._state = state
        self._slot = slot
        self._streams_text = streams_text
        self._gathering: set[int] = set()
        self._invalid: dict[str, ToolCallPart] = {}
        self.round = 0
        self._coalescer = state.coalescer
        if self._coalescer is not None:
            self._coalescer.watch(slot, self._merged)
        self._shown = self._new_shown()
        """Answer text shown in the current round and not retracted: with the run's coalescer (the usual
        case) a `ShownText`, the merged strings every store of the run keeps, holding no copy of a long
        answer; else `Pieces` (joined on demand: `+=` on an attribute copies the whole string per
        token). Neither holds a string object per token through the slot's end: pydantic-ai frees its
        own per-token strings when the response ends, and a list of them here kept a long answer's
        (~55 MB at 1,000,000 tokens) alive."""
        self.messages: list[ModelMessage] = []
        """The run's live message list (history included), kept so a stopped run keeps its transcript."""
        self.resumed: tuple[ModelMessage, ...] = ()
        """This slot's finished rounds from a stopped segment, which the resumed slot goes on from."""
        self.agent_run_id: str | None = None
        self.usage: RunUsage | None = None
        """The run's live usage, kept so a slot that fails still reports what it spent."""
        self.meter = OutputMeter(None)
        """The slot's output tokens against its ceiling (`budget.py`), counted from every delta."""
        self.step_offset = 0
        """Requests of earlier agent runs of this slot (it went on after an `AnswerProblem`): its rounds go on
        from there instead of starting at 1 again."""

    async def __call__(self, ctx: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
        self.messages, self.usage, self.agent_run_id = ctx.messages, ctx.usage, ctx.run_id
        self._state.usage.update(self._slot, ctx.usage)
        guards, step = self._state.guards, ctx.run_step + self.step_offset
        try:
            async for event in events:  # pulling the stream runs the model's own code
                guards.poll()
                await self._on(event, step)
        except PROCESS_EXITS as exc:  # see contain.py: the slot fails, the loop lives
            raise Escaped(exc) from exc

    async def _on(self, event: AgentStreamEvent, step: int) -> None:
        if isinstance(event, PartDeltaEvent):  # the common case first: one per streamed token
            delta = event.delta
            if isinstance(delta, TextPartDelta):
                self.meter.add(delta.content_delta)
                await self._text(delta.content_delta, step)
            elif isinstance(delta, ThinkingPartDelta) and delta.content_delta:
                self.meter.add(delta.content_delta)
                self._thinking(delta.content_delta, step)
            elif isinstance(delta, ToolCallPartDelta) and delta.args_delta:
                args = delta.args_delta
                self.meter.add(args if isinstance(args, str) else str(args))
        elif isinstance(event, PartStartEvent):
            part = event.part
            if isinstance(part, TextPart):
                self.meter.add(part.content)
                await self._text(part.content, step)
            elif isinstance(part, ThinkingPart):
                self.meter.add(part.content)
                self._thinking(part.content, step)
            elif isinstance(part, ToolCallPart):
                self.meter.add(part.args_as_json_str() if part.args else part.tool_name)
                self._tool_call(step)
        elif isinstance(event, FunctionToolCallEvent) and event.args_valid is False:
            self._invalid[event.tool_call_id] = event.part
        elif isinstance(event, FunctionToolResultEvent) and event.tool_call_id in self._invalid:
            self._refused(self._invalid.pop(event.tool_call_id), event.part, step)

    def _new_shown(self) -> ShownText | Pieces:
        return Pieces() if self._coalescer is None else ShownText()

    def _merged(self, text: str, round_no: int, parts: list[str]) -> None:
        """The run's coalescer emitted answer text of this slot, merged (see `ShownText`)."""
        if round_no == self.round and isinstance(self._shown, ShownText):
            self._shown.merged(text, parts)

    @property
    def slot(self) -> str:
        """The slot whose run this handler follows."""
        return self._slot

    @property
    def shown(self) -> str:
        """Answer text shown in the current round and not retracted (the run's credentials masked: it is
        kept as a retraction's narration and a failed slot's partial answer)."""
        text = str(self._shown)
        return self._state.secrets.mask(text) if self._state.secrets else text

    async def _text(self, text: str, step: int) -> None:
        if not self._streams_text or not text or step in self._gathering:
            return
        if step != self.round:
            self.round, self._shown = step, self._new_shown()
        # A pending guard is joined before any answer text is shown: nothing it may reject reaches the reader.
        if not self._state.guards.idle:
            await self._state.guards.join()
        self._shown.append(text)
        emit_text = self._state.emit_text
        if emit_text is not None:
            emit_text(TokenDelta, self._slot, text, step)  # merged with its neighbours before it fans out
        else:
            self._state.emit(TokenDelta(run_id=self._state.run_id, slot=self._slot, text=text, round=step))

    def _thinking(self, text: str, step: int) -> None:
        if not text:
            return
        emit_text = self._state.emit_text
        if emit_text is not None:
            emit_text(ThinkingDelta, self._slot, text, step)
        else:
            self._state.emit(ThinkingDelta(run_id=self._state.run_id, slot=self._slot, text=text, round=step))

    def _tool_call(self, step: int) -> None:
        self._gathering.add(step)
        if self._shown and self.round == step:
            self.retract("gathering")

    def new_messages(self) -> tuple[ModelMessage, ...]:
        """The slot's record so far: resumed rounds, then the messages its agent run added.

        pydantic-ai stamps each message with the agent run that made it (and may merge adjacent
        history messages), so the run id, not a position, tells the slot's own messages apart.
        """
        if self.agent_run_id is None:
            return self.resumed
        return (*self.resumed, *(m for m in self.messages if m.run_id == self.agent_run_id))

    def _refused(self, call: ToolCallPart, result: ToolReturnPart, step: int) -> None:
        """A call pydantic-ai refused on validation never reaches our wrapper; show it anyway."""
        try:
            args = call.args_as_dict()
        except ValueError:
            args = {"_raw": call.args_as_json_str()}
        text = f"invalid arguments: {result.model_response_str()}"
        run_id, slot, call_id, tool = self._state.run_id, self._slot, call.tool_call_id, call.tool_name
        self._state.emit(ToolStarted(run_id=run_id, slot=slot, call_id=call_id, tool_name=tool, args=args, round=step))
        self._state.emit(
            ToolCompleted(
                run_id=run_id,
                slot=slot,
                call_id=call_id,
                tool_name=tool,
                ok=False,
                result=text,
                error=text,
                round=step,
            )
        )

    def retract(self, reason: RetractReason) -> None:
        """Withdraw the text shown this round (a consumer that drew it drops it)."""
        if not self._shown:
            return
        text, self._shown = self.shown, self._new_shown()
        self._state.emit(
            SlotRetracted(run_id=self._state.run_id, slot=self._slot, reason=reason, text=text, round=self.round)
        )
