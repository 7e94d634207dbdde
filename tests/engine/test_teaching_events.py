"""The teaching view's raw material: each tool's schema up front, then every request and response."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from agentcell.engine import start_run

pytestmark = pytest.mark.anyio


def lookup(code: str) -> str:
    """Look a module up by its code."""
    return f"{code}: led by Ada"


async def tool_then_answer(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
    if len(messages) == 1:
        yield {0: DeltaToolCall(name="lookup", json_args='{"code": "PSYC605"}', tool_call_id="c1")}
    else:
        yield "Ada leads it."


async def test_run_started_carries_tool_schemas_and_each_round_its_request_and_response() -> None:
    run = start_run("Who leads PSYC605?\n[[answer|use_tools=true]]",
                    model=FunctionModel(stream_function=tool_then_answer), tools=[lookup], journal=False)
    await run
    events = run.events_so_far
    assert events[0].tool_schemas == ({  # type: ignore[union-attr]
        "name": "lookup", "description": "Look a module up by its code.",
        "parameters_json_schema": {"additionalProperties": False, "properties": {"code": {"type": "string"}},
                                   "required": ["code"], "type": "object"},
    },)
    requests = [e for e in events if e.kind == "model_request"]
    responses = [e for e in events if e.kind == "model_response"]
    assert [(r.round, r.offset, r.tools) for r in requests] == [(1, 0, ("lookup",)), (2, 1, ("lookup",))]
    assert requests[0].messages == ({"role": "user", "content": "Who leads PSYC605?"},)
    # Round 2 sends only what is new since round 1: the call and its result.
    assert [m["role"] for m in requests[1].messages] == ["assistant", "tool"]
    assert requests[1].messages[1]["content"] == "PSYC605: led by Ada"
    assert [r.round for r in responses] == [1, 2]
    assert responses[0].parts[0]["part_kind"] == "tool-call" and responses[0].parts[0]["tool_name"] == "lookup"
    assert responses[1].parts[0]["part_kind"] == "text" and responses[1].parts[0]["content"] == "Ada leads it."
    order = [e.kind for e in events if e.kind in ("model_request", "model_response", "tool_started", "token_delta")]
    assert order[:4] == ["model_request", "model_response", "tool_started", "model_request"]


async def test_teaching_events_do_not_repeat_a_long_answer() -> None:
    long_answer = "word " * 2_000

    async def talk(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        yield long_answer

    run = start_run("Talk.\n[[answer]]", model=FunctionModel(stream_function=talk), journal=False)
    result = await run
    assert result.answer == long_answer
    (response,) = [e for e in run.events_so_far if e.kind == "model_response"]
    content = response.parts[0]["content"]
    assert content.startswith("word word") and content.endswith("more characters, shown in the run above]")
    assert len(content) < 2_100


async def test_each_request_carries_only_what_is_new_and_instructions_once() -> None:
    calls = 0

    async def three_calls(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls <= 3:
            yield {0: DeltaToolCall(name="lookup", json_args=f'{{"code": "M{calls}"}}', tool_call_id=f"c{calls}")}
        else:
            yield "done"

    run = start_run("<system>Be brief.</system>Q\n[[answer|use_tools=true]]",
                    model=FunctionModel(stream_function=three_calls), tools=[lookup], journal=False)
    await run
    requests = [e for e in run.events_so_far if e.kind == "model_request"]
    assert [(r.round, r.offset, [m["role"] for m in r.messages]) for r in requests] == [
        (1, 0, ["system", "user"]),
        (2, 2, ["assistant", "tool"]),
        (3, 4, ["assistant", "tool"]),
        (4, 6, ["assistant", "tool"]),
    ]
