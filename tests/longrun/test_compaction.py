"""Compaction: at the threshold older turns become a summary; tool pairs never split."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pydantic_ai.messages import ModelMessage, ToolCallPart, ToolReturnPart

from agentcell.engine import Compaction, complete_async, stream
from agentcell.engine.compaction import SUMMARY_HEADER, SUMMARY_INSTRUCTIONS, choose_cut, safe_cuts
from agentcell.events import CompactionFinished, CompactionStarted, ContextUpdated, ToolCompleted
from tests.engine.conftest import Call, Script, conversation, slot, template

pytestmark = pytest.mark.anyio

PAGE = "x" * 1200  # ~300 tokens by the 4-characters-a-token estimate


def read(n: int) -> str:
    """Read page n."""
    return PAGE


def pairs_intact(messages: Sequence[ModelMessage]) -> bool:
    """Every tool return in a request has its call earlier in the same request, and vice versa."""
    calls = {p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
    returns = {p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}
    return returns <= calls and calls - returns <= {
        p.tool_call_id for p in messages[-1].parts if isinstance(p, ToolCallPart)
    }


def reading_script() -> Script:
    return Script(*[[Call("read", {"n": n}, id=f"c{n}")] for n in (1, 2, 3, 4)], ["done"])


async def test_compaction_triggers_at_the_threshold_and_keeps_tool_pairs() -> None:
    main, writer = reading_script(), Script(["SUMMARY"])
    tpl = template(slot("a", prompt="Read the pages.", use_tools=True))
    events = [
        e
        async for e in stream(
            tpl, model=main.model, tools=[read], context_window=1000, compaction=Compaction(model=writer.model)
        )
    ]
    started = [e for e in events if isinstance(e, CompactionStarted)]
    finished = [e for e in events if isinstance(e, CompactionFinished)]
    # Requests 1-3 carry ~0, ~310, ~620 tokens; request 4 would carry ~930 > 0.8 × 1000.
    assert [(e.tokens > 800, e.window, e.threshold, e.messages) for e in started] == [(True, 1000, 0.8, 7)]
    assert [(e.summarized, e.messages_before, e.messages_after, e.summary) for e in finished] == [(5, 7, 3, "SUMMARY")]
    assert finished[0].after < 400 < 800 < finished[0].before
    # The summary replaced the prompt and the first two rounds; round 3's call and return stay together.
    assert conversation(main.requests[3].messages) == [
        [("user", SUMMARY_HEADER + "SUMMARY")],
        [("call", "read", {"n": 3})],
        [("return", "read", PAGE)],
    ]
    # Request 5 reuses the remembered summary: no second summary is written.
    assert conversation(main.requests[4].messages)[:3] == conversation(main.requests[3].messages)
    assert len(writer.requests) == 1
    assert writer.requests[0].instructions == SUMMARY_INSTRUCTIONS
    prompt = conversation(writer.requests[0].messages)[0][0][1]
    assert prompt.startswith('User: Read the pages.\nAssistant called read({"n":1})\nTool read returned: xxx')
    assert all(pairs_intact(r.messages) for r in main.requests)
    # The run's record keeps everything; the summary's request counts in the usage.
    result = events[-1].result  # type: ignore[union-attr]
    assert len(result.messages) == 10
    assert sum(isinstance(p, ToolReturnPart) and p.content == PAGE for m in result.messages for p in m.parts) == 4
    assert result.usage.requests == 6
    gauge = [e for e in events if isinstance(e, ContextUpdated)]
    assert [(e.request, e.window) for e in gauge] == [(n, 1000) for n in range(1, 6)]


async def test_the_slot_model_writes_the_summary_when_none_is_configured() -> None:
    main = Script(*[[Call("read", {"n": n}, id=f"c{n}")] for n in (1, 2, 3)], ["SUMMARY"], ["done"])
    result = await complete_async(
        template(slot("a", prompt="Read.", use_tools=True)), model=main.model, tools=[read], context_window=1000
    )
    assert main.requests[3].instructions == SUMMARY_INSTRUCTIONS
    assert conversation(main.requests[4].messages)[0] == [("user", SUMMARY_HEADER + "SUMMARY")]
    assert result.answer == "done"


@pytest.mark.parametrize("compaction", [None, Compaction(threshold=None)], ids=["off", "no-threshold"])
async def test_compaction_can_be_turned_off(compaction: Compaction | None) -> None:
    main = reading_script()
    events = [
        e
        async for e in stream(
            template(slot("a", use_tools=True)),
            model=main.model,
            tools=[read],
            context_window=1000,
            compaction=compaction,
        )
    ]
    assert not [e for e in events if isinstance(e, CompactionStarted | CompactionFinished)]
    assert len(main.requests[4].messages) == 9


async def test_long_tool_results_are_cut_for_the_model_only() -> None:
    big = "y" * 30_000

    def fetch() -> str:
        """Fetch it."""
        return big

    main = Script([Call("fetch")], ["ok"])
    events = [e async for e in stream(template(slot("a", use_tools=True)), model=main.model, tools=[fetch])]
    seen = conversation(main.requests[1].messages)[-1][0][2]
    assert seen == "y" * 20_000 + (
        "\n[agentcell: tool result cut to 20000 of 30000 characters for the model; the full result is in the run's record]"
    )
    assert [e.result for e in events if isinstance(e, ToolCompleted)] == [big]
    result = events[-1].result  # type: ignore[union-attr]
    assert conversation(result.messages)[2] == [("return", "fetch", big)]


def test_cuts_never_fall_between_a_call_and_its_return() -> None:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    def call(i: str) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id=i)])

    def ret(*ids: str) -> ModelRequest:
        return ModelRequest(parts=[ToolReturnPart("t", "r", tool_call_id=i) for i in ids])

    two_calls = ModelResponse(parts=[ToolCallPart("t", {}, tool_call_id="b"), ToolCallPart("t", {}, tool_call_id="c")])
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("go")]),  # 0
        call("a"),  # 1
        ret("a"),  # 2
        two_calls,  # 3
        ret("b", "c"),  # 4
        ModelResponse(parts=[TextPart("so far")]),  # 5
        ModelRequest(parts=[UserPromptPart("more")]),  # 6
    ]
    assert safe_cuts(messages) == [1, 3, 5, 6]
    assert choose_cut(messages, keep_tokens=0) == 6
    assert choose_cut(messages, keep_tokens=10_000) == 3
    assert choose_cut(messages[:3], keep_tokens=0) is None
