"""Scripted models that count their requests, for the compare and fork tests."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Counted:
    """Calls `lookup` for `rounds` rounds, then answers with the last result it read.

    Every request's messages are kept (`requests`); `in_flight` counts requests not yet answered, and
    `gate` (when set) holds each request until the test opens it, so a test can see requests in flight
    together without timing anything.
    """

    name: str
    rounds: int = 2
    requests: list[list[ModelMessage]] = field(default_factory=list)
    in_flight: int = 0
    gate: asyncio.Event | None = None
    hold_from: int = 1
    """With `gate`: requests from this one on (1-based) wait for it."""
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def model(self) -> FunctionModel:
        async def fn(messages: list[ModelMessage], _info: AgentInfo) -> Any:
            self.requests.append(list(messages))
            self.in_flight += 1
            self.started.set()
            try:
                if self.gate is not None and len(self.requests) >= self.hold_from:
                    await self.gate.wait()
                done = sum(isinstance(m, ModelResponse) for m in messages)
                if done < self.rounds:
                    args = json.dumps({"q": f"item {done}"})
                    yield {0: DeltaToolCall(name="lookup", json_args=args, tool_call_id=f"c{done}")}
                else:
                    yield f"{self.name} read: {last_result(messages)}"
            finally:
                self.in_flight -= 1

        return FunctionModel(stream_function=fn, model_name=self.name)


def last_result(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    return str(part.content)
    return "nothing"


@dataclass
class Tools:
    calls: list[str] = field(default_factory=list)

    def lookup_tool(self) -> Any:
        async def lookup(q: str) -> str:
            """Look `q` up."""
            self.calls.append(q)
            return f"result for {q}"

        return lookup
