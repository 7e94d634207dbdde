"""Lesson mode's step pauses: `agentcell.start_run(..., step=True)` and the handle's `step()`, `go()`, `paused`."""

from __future__ import annotations

import asyncio

import pytest

import agentcell
from agentcell.errors import AgentcellError
from agentcell.events import ProcessingComplete, StepPaused, StepResumed

from .conftest import Call, Script, Sleep, slot, template

pytestmark = pytest.mark.anyio


async def lookup(code: str) -> str:
    """Look a module up by its code."""
    return f"{code}: Dr Ada Byron"


def _script() -> Script:
    return Script([Call("lookup", {"code": "PSYC605"})], ["Dr Ada Byron leads it."])


async def _settle(handle: agentcell.RunHandle) -> None:
    """Wait until the run sits at a pause (or ended)."""
    async with asyncio.timeout(10):
        async for event in handle.run.events():
            paused = handle.paused
            if isinstance(event, ProcessingComplete) or (
                isinstance(event, StepPaused) and paused is not None and paused.number == event.number
            ):
                return


async def test_each_step_advances_exactly_one_pause() -> None:
    script = _script()
    handle = agentcell.start_run(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                 step=True, journal=False)
    await _settle(handle)
    first = handle.paused
    assert first is not None and str(first).startswith("paused before request 1: ")
    assert "1 tool offered" in str(first)
    assert script.requests == []  # nothing is asked before the first step
    second = await handle.step()
    assert len(script.requests) == 1
    assert second is not None and str(second) == "paused before lookup(code='PSYC605')"
    third = await handle.step()
    assert len(script.requests) == 1  # the tool ran, the next request waits
    assert third is not None and str(third).startswith("paused before request 2: ")
    assert await handle.step() is None  # the last request answered: the run ended
    result = await handle
    assert result.status == "completed" and result.answer == "Dr Ada Byron leads it."
    assert len(script.requests) == 2


async def test_a_step_before_the_first_pause_counts_as_one_step() -> None:
    script = _script()
    handle = agentcell.start_run(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                 step=True, journal=False)
    reached = await handle.step()  # called at once, before the run reached its first pause
    assert len(script.requests) == 1
    assert reached is not None and reached.before == "tool"
    handle.go()
    assert (await handle).status == "completed"


async def test_go_runs_to_the_end() -> None:
    script = _script()
    handle = agentcell.start_run(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                 step=True, journal=False)
    await _settle(handle)
    handle.go()
    result = await handle
    assert result.status == "completed" and len(script.requests) == 2
    events = handle.run.events_so_far
    assert [e.how for e in events if isinstance(e, StepResumed)] == ["go"]
    assert len([e for e in events if isinstance(e, StepPaused)]) == 1


async def test_stop_while_paused_ends_the_run_stopped_once() -> None:
    script = Script([Sleep(5), "never"])
    handle = agentcell.start_run(template(slot("answer")), model=script.model, step=True, journal=False)
    await _settle(handle)
    assert handle.paused is not None
    handle.cancel()
    result = await handle
    assert result.status == "stopped" and script.requests == []
    events = handle.run.events_so_far
    assert sum(isinstance(e, ProcessingComplete) for e in events) == 1
    assert [e.how for e in events if isinstance(e, StepResumed)] == ["stopped"]
    assert handle.paused is None


async def test_a_run_without_step_refuses_step() -> None:
    script = Script(["hi"])
    handle = agentcell.start_run(template(slot("answer")), model=script.model, journal=False)
    with pytest.raises(AgentcellError, match="step=True"):
        await handle.step()
    await handle


def test_complete_does_not_take_step() -> None:
    with pytest.raises(TypeError, match="nobody could press Next"):
        agentcell.complete("Hi [[answer]]", step=True)  # type: ignore[call-arg]


async def test_stream_does_not_take_step() -> None:
    """A stepped `stream()` used to wait at its first pause for ever: its consumer has no handle to press Next."""
    with pytest.raises(TypeError, match="nobody could press Next"):
        async for _ in agentcell.stream("Hi [[answer]]", step=True):  # type: ignore[call-arg]
            pass
