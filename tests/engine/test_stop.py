"""Stop at many points of a run: always `stopped`, one ending, nothing left running."""

from __future__ import annotations

import asyncio
import threading
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
release_sync = threading.Event()
"""Lets `slow_sync` return; set only after a test has checked that the run did not wait for it."""
sync_returned = threading.Event()
HANG_GUARD_S = 60
"""A hang guard, not a time limit under test: a run Stop cannot end fails the test after this long."""


def slow_sync() -> str:
    """Block until the test releases it (a sync tool Stop cannot interrupt)."""
    release_sync.wait(HANG_GUARD_S)
    sync_returned.set()
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
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        log.append("approval cancelled")
        raise
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
    interrupted: Callable[[], bool] = lambda: True
    """Whether what the run was waiting for when Stop came was cut short (it would finish in 10 s, or never)."""


def _scripted(template: Any, script: Script, stop_when: Callable[[Event], bool], **kw: Any) -> Case:
    """A case whose model sleeps 10 s where Stop comes: the stop must cancel that sleep, not wait it out.

    (Stop may come before the request starts; then no request ran at all. None may run to its end.)"""
    return Case(template, script.model, stop_when, interrupted=lambda: _none_finished(script), **kw)


def _none_finished(script: Script) -> bool:
    return script.cancelled == len(script.requests)


def _guarded(guard: Script, main: Script, stop_when: Callable[[Event], bool]) -> Case:
    return Case(template(slot("g", "halt"), slot("answer")), routed(guard, main), stop_when,
                interrupted=lambda: _none_finished(guard) and not main.requests)


def _kind(kind: str, **fields: Any) -> Callable[[Event], bool]:
    return lambda e: e.kind == kind and all(getattr(e, k) == v for k, v in fields.items())


def cases() -> dict[str, Callable[[], Case]]:
    tools_slot = slot("answer", use_tools=True)
    return {
        "before the first request": lambda: Case(template(slot("answer")), Script(["x"]).model, None),
        "after RunStarted": lambda: Case(template(slot("answer")), Script(["x"]).model, _kind("run_started")),
        "waiting for the first token": lambda: _scripted(
            template(slot("answer")), Script([Sleep(10), "x"]), _kind("slot_started")
        ),
        "mid-stream": lambda: _scripted(
            template(slot("answer")),
            Script(["Dr ", Sleep(10), "x"]),
            _kind("token_delta"),
            partial={"answer": "Dr "},
        ),
        "while thinking": lambda: _scripted(
            template(slot("answer")), Script([Think("hmm"), Sleep(10), "x"]), _kind("thinking_delta")
        ),
        "drafting a typed slot": lambda: _scripted(
            template(slot("n", "int")), Script([Sleep(10), Final(1)]), _kind("slot_started")
        ),
        "during a sync tool": lambda: Case(
            template(tools_slot),
            Script([Call("slow_sync")], ["x"]).model,
            _kind("tool_started"),
            tools=[slow_sync],
            interrupted=lambda: not sync_returned.is_set(),  # the thread was abandoned (it is still blocked)
        ),
        "during an async tool": lambda: Case(
            template(tools_slot),
            Script([Call("slow_async")], ["x"]).model,
            _kind("tool_started"),
            tools=[slow_async],
            interrupted=lambda: log == ["async cancelled"],
        ),
        "during an approval wait": lambda: Case(
            template(tools_slot),
            Script([Call("guarded_write")], ["x"]).model,
            _kind("approval_requested"),
            tools=[guarded_write],
            approve=never_answers,
            interrupted=lambda: log == ["approval cancelled"],
        ),
        "between slots": lambda: _between_slots(),
        "during a guard": lambda: _guarded(Script(verdict(False, after=10)), Script(["x"]), _kind("slot_started",
                                                                                                   slot="answer")),
    }


def _between_slots() -> Case:
    script = Script(["A"], ["B"])
    return Case(template(slot("a"), slot("b")), script.model, _kind("slot_completed", slot="a"),
                results={"a": "A"}, interrupted=lambda: len(script.requests) == 1)  # slot b never asked


@pytest.mark.parametrize("name", list(cases()))
async def test_stop_ends_the_run_stopped(name: str) -> None:
    log.clear()
    release_sync.clear()
    sync_returned.clear()
    baseline = tasks_now()
    case = cases()[name]()
    run = start_run(case.template, model=case.model, tools=case.tools, approve=case.approve)
    if case.stop_when is None:
        run.cancel()
    seen: list[Event] = []
    stopped = case.stop_when is None
    try:
        async with asyncio.timeout(HANG_GUARD_S):
            async for event in run.events():
                seen.append(event)
                if not stopped and case.stop_when is not None and case.stop_when(event):
                    stopped = True
                    run.cancel()
        # Ended by the stop, not by waiting out what was in progress (which takes 10 s, or forever).
        assert case.interrupted(), f"the run waited for what Stop interrupted; log {log}"
    finally:
        release_sync.set()
    endings = [e for e in seen if isinstance(e, ProcessingComplete)]
    assert len(endings) == 1 and seen[-1] is endings[0]
    result = await run
    assert (result.status, endings[0].status, endings[0].early_termination) == ("stopped", "stopped", False)
    assert result.partial == case.partial
    assert result.results == case.results
    assert await leftover_tasks(baseline) == []


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
    # The model request must be in flight (a fixed 50 ms sleep raced the run's first-event work on a loaded machine).
    assert await eventually(lambda: bool(script.requests))
    thread = threading.Thread(target=run.cancel)
    thread.start()
    thread.join()
    assert (await asyncio.wait_for(run.wait(), HANG_GUARD_S)).status == "stopped"
    assert script.cancelled == 1  # the model's 10 s sleep was cut short, not waited out
