"""`pydantic_ai.Tool` objects and OpenAI-style declarations with a dispatch mapping run beside callables."""

from __future__ import annotations

import re

import pytest
from pydantic_ai import Tool

from agentcell.engine import complete_async, stream
from agentcell.errors import ToolDefinitionError
from tests.engine.conftest import Call, Script, brief, conversation, slot, template

pytestmark = pytest.mark.anyio

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def get_weather(city: str) -> str:
    return f"It is 20°C in {city}"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_tool_objects_run() -> None:
    script = Script([Call("plus", {"a": 2, "b": 3})], ["5"])
    result = await complete_async(
        template(slot("x", use_tools=True)), model=script.model, tools=[Tool(add, name="plus", takes_ctx=False)]
    )
    assert script.tools_per_request[0] == ["plus"]
    assert conversation(script.requests[1].messages)[-1] == [("return", "plus", 5)]
    assert result.answer == "5"


async def test_openai_declarations_run_through_dispatch() -> None:
    script = Script([Call("get_weather", {"city": "Paris"})], ["20°C"])
    result = await complete_async(
        template(slot("x", use_tools=True)),
        model=script.model,
        tools=[WEATHER, add],
        dispatch={"get_weather": get_weather},
    )
    assert sorted(script.tools_per_request[0]) == ["add", "get_weather"]
    assert conversation(script.requests[1].messages)[-1] == [("return", "get_weather", "It is 20°C in Paris")]
    assert result.answer == "20°C"


async def test_openai_declaration_refuses_bad_arguments_before_the_call() -> None:
    calls: list[str] = []

    def weather(city: str) -> str:
        calls.append(city)
        return "sunny"

    script = Script([Call("get_weather", {"town": 3})], [Call("get_weather", {"city": "Oslo"})], ["ok"])
    tpl = template(slot("x", use_tools=True))
    stream_events = [
        e async for e in stream(tpl, model=script.model, tools=[WEATHER], dispatch={"get_weather": weather})
    ]
    assert calls == ["Oslo"]
    refusal = "missing required argument 'city'; unknown argument 'town'"
    assert conversation(script.requests[1].messages)[-1] == [("return", "get_weather", refusal)]
    assert ("tool_completed", "get_weather", True, "sunny", False) in brief(stream_events)


async def test_declaration_without_dispatch_fails_before_any_request() -> None:
    script = Script()
    message = "tool 'get_weather' is declared but dispatch= has no function for it (it maps nothing)"
    with pytest.raises(ToolDefinitionError, match=re.escape(message)):
        await complete_async(template(slot("x", use_tools=True)), model=script.model, tools=[WEATHER])
    assert script.requests == []
