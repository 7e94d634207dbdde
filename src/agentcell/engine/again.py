"""How a slot goes on after an `AnswerProblem` (`answer_checks.py`): the server's state, not the model's answer.

The slot's agent run ended on a response that pydantic-ai should not read (empty, cut off, a missed output tool,
a streamed tool round answered with nothing). `Again` says what happened, waits when the server needs a moment,
and hands back the slot's finished rounds, from which a new agent run of the slot goes on (as a resumed slot
does after Stop): so the model is asked the same request again, not told to "please answer".
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models import Model

from ..events import Retrying
from ..usage import Usage
from .answer_checks import ANSWER_RETRIES, AnswerProblem, delay, fallback_note, gave_up, reason, serial_note
from .output_modes import server_key, talks_to_server
from .state import RunState, SlotEnded

if TYPE_CHECKING:
    from .requests import SlotRequests
    from .streaming import SlotStream


@dataclass
class Again:
    """One slot run's handling of its `AnswerProblem`s: how often it has asked again."""

    tries: int = 0

    async def __call__(
        self, state: RunState, stream: SlotStream, requests: SlotRequests, model: Model, problem: AnswerProblem
    ) -> tuple[ModelMessage, ...]:
        """Say what happened, wait if the server needs a moment, and return the rounds to go on from; raise
        `SlotEnded` once empty or cut-off answers used up their tries. `model`: the slot's model (unwrapped
        from its hooks), whose server the run learns about."""
        name = stream.slot
        _count_lost(state, name, requests)
        facts, key = state.server, server_key(model)
        if problem.kind == "tools_unstreamed" and key not in facts.unstreamed_tools:
            facts.unstreamed_tools.add(key)
            state.warn(name, fallback_note(name, problem))
        elif problem.kind == "no_output_tool" and key not in facts.prompted:
            facts.prompted.add(key)
            state.warn(name, fallback_note(name, problem))
        else:
            if talks_to_server(model) and key not in facts.serial:
                facts.serial[key] = asyncio.Semaphore(1)
                state.warn(name, serial_note(name, problem))
            self.tries += 1
            if self.tries > ANSWER_RETRIES:
                raise SlotEnded("failed", gave_up(name, problem, self.tries))
            wait = delay(self.tries)
            why = reason(problem)
            state.emit(Retrying(run_id=state.run_id, slot=name, attempt=self.tries, delay_s=wait, reason=why))
            stream.retract("errored")  # a cut-off answer's text is asked for again
            await asyncio.sleep(wait)  # a Stop cancels the wait at once
        if stream.usage is not None:
            state.usage.carry(name)  # what this agent run spent stays counted; the next one counts from zero
        stream.step_offset = requests.count
        return resumable(stream.new_messages())


def _count_lost(state: RunState, name: str, requests: SlotRequests) -> None:
    """pydantic-ai never counted the request (the problem was raised before it took the response): its reported
    tokens are added here (an estimate was added already); one answered with not even a first chunk is still in
    flight, and gets its row now."""
    row = requests.last_row if not requests.in_flight and requests.last_row is not None else None
    lost = Usage(requests=1)
    if row is not None and not row.estimated:
        lost = Usage(requests=1, input_tokens=row.input_tokens, output_tokens=row.output_tokens, cost=row.cost)
    requests.abandon("failed")
    state.usage.add(name, lost)


def no_tool_calls(requests: SlotRequests | None) -> str:
    """For a slot with tools that ended without any tool call: the server may not support tool calling."""
    if requests is None or not requests.offered_tools or requests.tool_calls:
        return ""
    asked = requests.count
    return (
        f" (none of its {asked} request{'s' if asked != 1 else ''} with tools got a tool call: the server may not "
        "support tool calling)"
    )


def resumable(messages: Sequence[ModelMessage]) -> tuple[ModelMessage, ...]:
    """A stopped slot's messages a resume can go on from: up to its last request.

    A trailing response is dropped: it is the interrupted one (partial text, or tool calls that never
    got their results), so the model answers that request again.
    """
    end = len(messages)
    while end and not isinstance(messages[end - 1], ModelRequest):
        end -= 1
    return tuple(messages[:end])
