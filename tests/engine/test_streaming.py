"""Retraction, loop detection, conversation building, checkpoints."""

from __future__ import annotations

import pytest

from agentcell.engine import complete_async, stream
from agentcell.engine.calls import NUDGE
from agentcell.errors import RunError
from agentcell.template.program import Turn

from .conftest import Call, Final, Raise, Script, brief, checkpoint, conversation, slot, template

pytestmark = pytest.mark.anyio


def search(q: str) -> str:
    """Search."""
    return "nothing new"


async def test_text_before_a_tool_call_is_retracted_as_gathering() -> None:
    script = Script(["Let me ", "check. ", Call("search", {"q": "x"})], ["Found ", "it."])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[search])]
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "answer"),
        ("token_delta", "answer", "Let me check. "),
        ("slot_retracted", "answer", "gathering", "Let me check. "),
        ("tool_started", "search", {"q": "x"}),
        ("tool_completed", "search", True, "nothing new", False),
        ("token_delta", "answer", "Found it."),
        ("slot_completed", "answer", "Found it."),
        ("processing_complete", "completed", False),
    ]


async def test_failure_after_the_first_token_retracts_as_errored() -> None:
    script = Script(["partial ", Raise(ConnectionResetError("connection reset mid-stream"))])
    events = [e async for e in stream(template(slot("answer")), model=script.model)]
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "answer"),
        ("token_delta", "answer", "partial "),
        ("slot_retracted", "answer", "errored", "partial "),
        ("slot_failed", "answer", "failed"),
        ("processing_complete", "failed", False),
    ]
    assert events[-1].result.error == "ConnectionResetError: connection reset mid-stream"
    with pytest.raises(RunError, match="ConnectionResetError: reset"):
        await complete_async(template(slot("answer")), model=Script(["x", Raise(ConnectionResetError("reset"))]).model)


async def test_a_repeated_round_gets_a_nudge_and_a_second_repeat_goes_tool_free() -> None:
    def same(messages: object, info: object) -> list[object]:
        if info.function_tools:  # type: ignore[attr-defined]
            return [Call("search", {"q": "same"})]
        return ["ok"]

    script = Script(same, repeat_last=True)
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[search])
    assert script.tools_per_request == [["search"], ["search"], ["search"], []]
    returns = [conversation(r.messages)[-1] for r in script.requests[1:]]
    assert returns == [
        [("return", "search", "nothing new")],
        [("return", "search", f"nothing new\n\n{NUDGE}")],
        [("return", "search", f"nothing new\n\n{NUDGE}")],
    ]
    assert result.answer == "ok"


async def test_conversation_carries_answers_and_keeps_guards_out_and_checkpoints_reset() -> None:
    script = Script(
        ["A1"],
        [Final(7)],
        ["A3"],
    )
    tpl = template(
        slot("first", prompt="Tell me a fact.", system="S"),
        slot("count", "int", prompt="How many?", required=True, turns=(Turn(role="assistant", text="hm"),)),
        checkpoint("Part 2"),
        slot("again", prompt=lambda ctx: f"Earlier: {ctx['first']} / {ctx['count']}"),
    )
    events = [e async for e in stream(tpl, model=script.model)]
    assert [r.instructions for r in script.requests] == ["S", None, None]
    assert conversation(script.requests[1].messages) == [
        [("user", "Tell me a fact.")],
        [("assistant", "A1"), ("assistant", "hm")],  # pydantic-ai merges adjacent responses
        [("user", "How many?")],
    ]
    assert conversation(script.requests[2].messages) == [[("user", "Earlier: A1 / 7")]]
    assert ("checkpoint_reached", "Part 2") in brief(events)
    result = events[-1].result
    assert result.results == {"first": "A1", "count": 7, "again": "A3"}
    assert result.answer == "A3"
    assert [m["role"] for m in result.to_openai()] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
