"""Stop (SPEC §3.5) at many points of a run: always `stopped`, one ending, nothing left running."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from agentcell.engine import start_run, stream
from agentcell.events import ApprovalRequested, Event, ProcessingComplete
from agentcell.tools import tool

from .conftest import (
    Call,
    Final,
    Script,
    Sleep,
    Think,
    eventually,
    leftover_tasks,
    routed,
    slot,
    tasks_now,
    template,
    verdict,
)

pytestmark = pytest.mark.anyio

log: list[str] = []


def slow_sync() -> str:
    """Block for a second."""
    time.sleep(1.0)
    log.append("sync finished")
    return "late"


async def slow_async() -> str:
    """Wait for a long time."""
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:
        log.append("async cancelled")
        raise
    return "never"


@tool(approve=True)
def guarded_write() -> str:
    """Write something."""
    return "written"


async def never_answers(request: ApprovalRequested) -> bool:
    await asyncio.Event().wait()
    return True


@dataclass
class Case:
    template: Any
    model: Any
    stop_when: Callable[[Event], bool] | None
    """Stop when this event is seen (`None`: stop right after starting)."""
    tools: list[Any] = field(default_factory=list)
    approve: Any = None
    partial: dict[str, str] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)


def _kind(kind: str, **fields: Any) -> Callable[[Event], bool]:
    return lambda e: e.kind == kind and all(getattr(e, k) == v for k, v in fields.items())


def cases() -> dict[str, Callable[[], Case]]:
    tools_slot = slot("answer", use_tools=True)
    return {
        "before the first request": lambda: Case(template(slot("answer")), Script(["x"]).model, None),
        "after RunStarted": lambda: Case(template(slot("answer")), Script(["x"]).model, _kind("run_started")),
        "waiting for the first token": lambda: Case(
            template(slot("answer")), Script([Sleep(10), "x"]).model, _kind("slot_started")
        ),
        "mid-stream": lambda: Case(
            template(slot("answer")),
            Script(["Dr ", Sleep(10), "x"]).model,
            _kind("token_delta"),
            partial={"answer": "Dr "},
        ),
        "while thinking": lambda: Case(
            template(slot("answer")), Script([Think("hmm"), Sleep(10), "x"]).model, _kind("thinking_delta")
        ),
        "drafting a typed slot": lambda: Case(
            template(slot("n", "int")), Script([Sleep(10), Final(1)]).model, _kind("slot_started")
        ),
        "during a sync tool": lambda: Case(
            template(tools_slot),
            Script([Call("slow_sync")], ["x"]).model,
            _kind("tool_started"),
            tools=[slow_sync],
        ),
        "during an async tool": lambda: Case(
            template(tools_slot),
            Script([Call("slow_async")], ["x"]).model,
            _kind("tool_started"),
            tools=[slow_async],
        ),
        "during an approval wait": lambda: Case(
            template(tools_slot),
            Script([Call("guarded_write")], ["x"]).model,
            _kind("approval_requested"),
            tools=[guarded_write],
            approve=never_answers,
        ),
        "between slots": lambda: Case(
            template(slot("a"), slot("b")),
            Script(["A"], ["B"]).model,
            _kind("slot_completed", slot="a"),
            results={"a": "A"},
        ),
        "during a guard": lambda: Case(
            template(slot("g", "halt"), slot("answer")),
            routed(Script(verdict(False, after=10)), Script(["x"])),
            _kind("slot_started", slot="answer"),
        ),
    }


@pytest.mark.parametrize("name", list(cases()))
async def test_stop_ends_the_run_stopped(name: str) -> None:
    log.clear()
    baseline = tasks_now()
    case = cases()[name]()
    run = start_run(case.template, model=case.model, tools=case.tools, approve=case.approve)
    if case.stop_when is None:
        run.cancel()
    seen: list[Event] = []
    stopped_at = 0.0
    async for event in run.events():
        seen.append(event)
        if case.stop_when is not None and case.stop_when(event) and not stopped_at:
            stopped_at = time.monotonic()
            run.cancel()
    assert time.monotonic() - (stopped_at or time.monotonic()) < 0.5
    endings = [e for e in seen if isinstance(e, ProcessingComplete)]
    assert len(endings) == 1 and seen[-1] is endings[0]
    result = await run
    assert (result.status, endings[0].status, endings[0].early_termination) == ("stopped", "stopped", False)
    assert result.partial == case.partial
    assert result.results == case.results
    assert await leftover_tasks(baseline) == []
    if name == "during an async tool":
        assert log == ["async cancelled"]
    if name == "during a sync tool":
        assert log == []  # the thread was abandoned; its late result is ignored


async def test_cancelling_the_consumer_still_ends_the_run_stopped() -> None:
    baseline = tasks_now()
    script = Script(["a", Sleep(10), "b"])
    run = start_run(template(slot("answer")), model=script.model)

    async def consume() -> None:
        async for _ in run.events():
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    consumer.cancel()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    result = await run
    assert result.status == "stopped"
    assert [e.kind for e in run.events_so_far].count("processing_complete") == 1
    assert await leftover_tasks(baseline) == []


async def test_cancelling_the_task_iterating_stream_stops_the_run() -> None:
    baseline = tasks_now()
    script = Script(["a", Sleep(10), "b"])
    streaming = asyncio.Event()

    async def consume() -> None:
        async for event in stream(template(slot("answer")), model=script.model):
            if event.kind == "token_delta":
                streaming.set()

    consumer = asyncio.create_task(consume())
    await streaming.wait()
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert await eventually(lambda: script.cancelled == 1)
    assert await leftover_tasks(baseline) == []


async def test_stop_from_another_thread() -> None:
    script = Script(["a", Sleep(10), "b"])
    run = start_run(template(slot("answer")), model=script.model)
    await asyncio.sleep(0.05)
    thread = threading.Thread(target=run.cancel)
    thread.start()
    thread.join()
    assert (await asyncio.wait_for(run.wait(), 1)).status == "stopped"
