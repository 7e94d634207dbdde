"""The request hooks on the run's model (`engine/slotmodel.py`): once per request step, in pydantic-ai's order.

The hooks used to be a pydantic-ai capability's `before_model_request`/`after_model_request`, which run once
per request step; a model wrapper is called once per provider call. These tests pin that a step whose
provider suspends its response (continuation segments) is still one request to the slot's events, and
that a request's end events come before the tool calls of its response.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings

from agentcell.engine import stream
from tests.tool_rounds import lookup, rounds_model

pytestmark = pytest.mark.anyio


class Pausing(FunctionModel):
    """Suspends each step's response once (as Anthropic's `pause_turn` does), then finishes it when asked again
    with the suspended response at the end of the messages."""

    def __init__(self) -> None:
        self.calls: list[list[ModelMessage]] = []

        async def fn(messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
            yield " world" if isinstance(messages[-1], ModelResponse) else "hello"

        super().__init__(stream_function=fn)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        self.calls.append(messages)
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as sr:
            if not isinstance(messages[-1], ModelResponse):
                sr.state = "suspended"
            yield sr


async def test_a_suspended_response_continued_in_a_second_call_is_one_request_to_the_slot() -> None:
    model = Pausing()
    events = [e async for e in stream("Say hi [[answer]]", model=model, journal=False)]
    assert events[-1].status == "completed", events[-1]
    assert len(model.calls) == 2  # the provider was called twice: the step and its continuation
    second = model.calls[1]
    assert isinstance(second[-1], ModelResponse) and second[:-1] == model.calls[0]  # sent again, no hook rerun
    kinds = [e.kind for e in events]
    assert kinds.count("model_request") == 1
    assert kinds.count("model_response") == 1 and kinds.count("request_completed") == 1
    received = next(e for e in events if e.kind == "model_response")
    assert [p.get("content") for p in received.parts] == ["hello", " world"]  # both segments' parts
    assert "".join(e.text for e in events if e.kind == "token_delta") == "hello world"


async def test_a_requests_end_events_come_before_the_tool_calls_of_its_response() -> None:
    events = [e async for e in stream("Go [[answer|use_tools]]", model=rounds_model(2), tools=[lookup], journal=False)]
    kinds = [e.kind for e in events if e.kind in {"model_request", "request_completed", "tool_started"}]
    assert kinds == ["model_request", "request_completed", "tool_started"] * 2 + [
        "model_request",
        "request_completed",
    ]
