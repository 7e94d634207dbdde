"""A single text slot: streaming, the three entry points, and Stop mid-stream."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentcell.engine import complete, complete_async, start_run, stream
from agentcell.errors import EventLoopRunning, UndefinedVariableError
from agentcell.events import Event, ProcessingComplete

from .conftest import Call, Script, Sleep, brief, conversation, eventually, leftover_tasks, slot, tasks_now, template

pytestmark = pytest.mark.anyio


async def test_text_slot_streams_tokens_then_completes() -> None:
    script = Script(["Dr ", "Smith ", "leads it."])
    tpl = template(slot("answer", prompt="Who leads PSYC605?", system="Be brief."))
    events = [e async for e in stream(tpl, model=script.model, run_id="r1")]
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "answer"),
        ("token_delta", "answer", "Dr Smith leads it."),  # the tokens of one 20 ms, merged (`coalesce.py`)
        ("slot_completed", "answer", "Dr Smith leads it."),
        ("processing_complete", "completed", False),
    ]
    assert all(e.run_id == "r1" for e in events)
    [request] = script.requests
    assert request.tools == [] and request.outputs == []
    assert request.instructions == "Be brief."
    assert conversation(request.messages) == [[("user", "Who leads PSYC605?")]]
    final = events[-1]
    assert isinstance(final, ProcessingComplete)
    assert final.result.answer == "Dr Smith leads it."
    assert final.result.results == {"answer": "Dr Smith leads it."}
    assert final.result.usage.requests == 1
    assert final.result.to_openai() == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Who leads PSYC605?"},
        {"role": "assistant", "content": "Dr Smith leads it."},
    ]


async def test_complete_async_returns_result() -> None:
    script = Script(["hello"])
    result = await complete_async(template(slot("answer")), model=script.model)
    assert (result.status, result.answer) == ("completed", "hello")


def test_complete_runs_without_a_loop() -> None:
    script = Script(["hello"])
    assert complete(template(slot("answer")), model=script.model).answer == "hello"


async def test_complete_inside_a_running_loop_says_to_await() -> None:
    with pytest.raises(EventLoopRunning, match=r"use `await complete_async\(\.\.\.\)` or the %%agent magic"):
        complete(template(slot("answer")), model=Script().model)


async def test_undefined_variable_raises_before_any_request() -> None:
    script = Script()
    tpl = template(slot("answer"), variables=["question"])
    with pytest.raises(UndefinedVariableError):
        start_run(tpl, model=script.model, context={"other": 1})
    assert script.requests == []


async def test_stop_mid_stream_keeps_partial_text() -> None:
    script = Script(["Dr ", "Smith", Sleep(5), "never"])
    run = start_run(template(slot("answer")), model=script.model)
    seen = []
    async for event in run.events():
        seen.append(event)
        if event.kind == "token_delta" and event.text.endswith("Smith"):
            run.cancel()
    assert brief(seen) == [
        ("run_started",),
        ("slot_started", "answer"),
        ("token_delta", "answer", "Dr Smith"),
        ("slot_failed", "answer", "stopped"),
        ("processing_complete", "stopped", False),
    ]
    result = await run
    assert result.status == "stopped"
    assert result.partial == {"answer": "Dr Smith"}
    assert result.results == {}
    assert seen[-2].partial == "Dr Smith"
    assert await eventually(lambda: script.cancelled == 1)


async def test_closing_the_stream_stops_the_run() -> None:
    baseline = tasks_now()
    script = Script(["a", Sleep(5), "b"])
    gen = stream(template(slot("answer")), model=script.model)
    async for event in gen:
        if event.kind == "token_delta":
            break
    await gen.aclose()
    assert await eventually(lambda: script.cancelled == 1)
    assert await leftover_tasks(baseline) == []


async def test_twenty_concurrent_runs_keep_their_own_events() -> None:
    baseline = tasks_now()

    def tool_for(n: int) -> Any:
        async def echo(x: int) -> int:
            """Echo."""
            await asyncio.sleep(0.01 * (n % 3))
            return x

        return echo

    async def one(n: int) -> list[Event]:
        script = Script([Call("echo", {"x": n})], [f"run {n} ", Sleep(0.01 * (n % 4)), "done"])
        tpl = template(slot("answer", use_tools=True))
        return [e async for e in stream(tpl, model=script.model, tools=[tool_for(n)], run_id=f"run-{n}")]

    all_events = await asyncio.gather(*(one(n) for n in range(20)))
    for n, events in enumerate(all_events):
        assert {e.run_id for e in events} == {f"run-{n}"}
        assert events[-1].kind == "processing_complete" and events[-1].status == "completed"
        assert events[-1].result.answer == f"run {n} done"
        assert [e.result for e in events if e.kind == "tool_completed"] == [str(n)]
    assert await leftover_tasks(baseline) == []
