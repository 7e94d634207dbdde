"""Budgets: ceilings, clamping, tool-free final requests, running out."""

from __future__ import annotations

import pytest
from pydantic_ai.usage import UsageLimits

from agentcell.engine import complete_async, stream
from agentcell.engine.budget import ceiling_from, slot_budget
from agentcell.errors import BudgetExhausted
from agentcell.events import RunWarning, ToolCompleted

from .conftest import Call, Script, brief, slot, template

pytestmark = pytest.mark.anyio


def search(q: str) -> str:
    """Search the web."""
    return f"result for {q}"


def always_gathering(messages: object, info: object) -> list[object]:
    """A model that calls a tool whenever it is offered one, and answers only when it is not."""
    n = len(messages)  # type: ignore[arg-type]
    if info.function_tools:  # type: ignore[attr-defined]
        return [Call("search", {"q": f"q{n}"})]
    return ["final ", "answer"]


def test_default_ceiling_and_clamping() -> None:
    ceiling = ceiling_from(None)
    assert (ceiling.request_limit, ceiling.tool_calls_limit, ceiling.output_tokens_limit) == (20, 20, 250_000)
    budget = slot_budget(ceiling_from(UsageLimits(request_limit=4)), slot="s", max_iter=10, max_calls=3)
    assert (budget.max_iter, budget.max_calls, budget.limits.request_limit) == (4, 3, 4)
    assert budget.warnings == (
        "slot 's' asked for max_iter=10 but the ceiling is 4; using 4 (raise it with limits=UsageLimits(request_limit=...))",
    )


async def test_max_iter_makes_the_last_request_tool_free() -> None:
    script = Script(always_gathering, repeat_last=True)
    tpl = template(slot("answer", use_tools=True, max_iter=3))
    events = [e async for e in stream(tpl, model=script.model, tools=[search])]
    assert script.tools_per_request == [["search"], ["search"], []]
    assert brief(events)[-3:] == [
        ("token_delta", "answer", "final answer"),
        ("slot_completed", "answer", "final answer"),
        ("processing_complete", "completed", False),
    ]


async def test_max_iter_one_offers_no_tools() -> None:
    script = Script(always_gathering, repeat_last=True)
    await complete_async(template(slot("answer", use_tools=True, max_iter=1)), model=script.model, tools=[search])
    assert script.tools_per_request == [[]]


async def test_clamped_max_iter_keys_the_tool_free_request_on_the_ceiling() -> None:
    script = Script(always_gathering, repeat_last=True)
    tpl = template(slot("answer", use_tools=True, max_iter=10))
    events = [e async for e in stream(tpl, model=script.model, tools=[search], limits=UsageLimits(request_limit=4))]
    assert script.tools_per_request == [["search"], ["search"], ["search"], []]
    assert [e.message for e in events if isinstance(e, RunWarning)] == [
        "slot 'answer' asked for max_iter=10 but the ceiling is 4; using 4 "
        "(raise it with limits=UsageLimits(request_limit=...))"
    ]
    assert events[-1].status == "completed"


async def test_spent_max_calls_makes_the_next_request_tool_free() -> None:
    script = Script(always_gathering, repeat_last=True)
    tpl = template(slot("answer", use_tools=True, max_calls=2))
    result = await complete_async(tpl, model=script.model, tools=[search])
    assert script.tools_per_request == [["search"], ["search"], []]
    assert (result.answer, result.usage.tool_calls, result.usage.requests) == ("final answer", 2, 3)


async def test_calls_beyond_max_calls_in_one_round_are_not_run() -> None:
    runs: list[str] = []

    def note(x: str) -> str:
        """Note."""
        runs.append(x)
        return x

    script = Script([Call("note", {"x": "a"}), Call("note", {"x": "b"})], ["done"])
    tpl = template(slot("answer", use_tools=True, max_calls=1))
    events = [e async for e in stream(tpl, model=script.model, tools=[note])]
    assert runs == ["a"]
    assert sorted((e.ok, e.result) for e in events if isinstance(e, ToolCompleted)) == [
        (False, "not run: this slot's max_calls=1 is spent; answer with what you have"),
        (True, "a"),
    ]
    assert script.tools_per_request == [["note"], []]


async def test_hitting_the_ceiling_exhausts_the_budget_and_keeps_the_transcript() -> None:
    script = Script(always_gathering, repeat_last=True)
    tpl = template(slot("answer", use_tools=True))
    limits = UsageLimits(request_limit=3)
    events = [e async for e in stream(tpl, model=script.model, tools=[search], limits=limits)]
    assert script.tools_per_request == [["search"]] * 3
    failed, done = events[-2], events[-1]
    assert (failed.kind, failed.status) == ("slot_failed", "budget_exhausted")
    assert failed.error == (
        "slot 'answer' ran out of budget: The next request would exceed the request_limit of 3; "
        "raise it with limits=UsageLimits(request_limit=...), or set max_iter on the slot so its last "
        "request is answered without tools"
    )
    assert (done.status, done.result.error) == ("budget_exhausted", failed.error)
    assert len(done.result.messages) == 7  # prompt + 3 × (call, return)
    with pytest.raises(BudgetExhausted, match="request_limit of 3") as raised:
        await complete_async(tpl, model=Script(always_gathering, repeat_last=True).model, tools=[search], limits=limits)
    assert raised.value.result.status == "budget_exhausted"
