"""Scripted models for the batch tests: answers computed from each row's prompt, at a chosen pace."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def last_prompt(messages: list[ModelMessage]) -> str:
    """The text of the latest user prompt."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def tool_returns(messages: list[ModelMessage]) -> list[str]:
    """What every tool call so far returned, as the model reads it (errors included)."""
    out: list[str] = []
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, ToolReturnPart):
                out.append(part.model_response_str())
            elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
                out.append("error: " + part.model_response())
    return out


class Shouter:
    """Answers `SHOUT: <word>` with the word upper-cased, after a random short pause (finish order shuffles)."""

    def __init__(self, *, pause: float = 0.004, seed: int = 7, fail_on: str | None = None) -> None:
        self.pause = pause
        self.rng = random.Random(seed)
        self.fail_on = fail_on
        self.requests = 0
        self.running = 0
        self.most_running = 0
        self.cancelled = 0
        self.model = FunctionModel(stream_function=self._stream, model_name="shouter")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.requests += 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        finished = False
        try:
            await asyncio.sleep(self.rng.uniform(0, self.pause))
            word = re.search(r"SHOUT: (\S+)", last_prompt(messages))
            text = word.group(1) if word else "?"
            if self.fail_on is not None and text == self.fail_on:
                raise RuntimeError(f"the model cannot shout {text}")
            yield text.upper()
            finished = True
        finally:
            # Cancelled in the pause (CancelledError) or closed at the yield (GeneratorExit): not finished.
            self.running -= 1
            if not finished:
                self.cancelled += 1


def calling(tool: str, arg: str, *, then: Callable[[list[str]], str]) -> FunctionModel:
    """A model that calls `tool(<arg>=row word)` once, then answers `then(tool returns)`; it gives up
    (raises, as a provider error would) when the tool returned an error."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        returns = tool_returns(messages)
        if not returns:
            word = re.search(r"SHOUT: (\S+)", last_prompt(messages))
            yield {0: DeltaToolCall(name=tool, json_args=f'{{"{arg}": "{word.group(1) if word else ""}"}}',
                                    tool_call_id="c1")}
            return
        yield then(returns)

    return FunctionModel(stream_function=stream, model_name="caller")
