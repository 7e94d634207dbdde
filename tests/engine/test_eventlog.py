"""The run's transcript is reduced when it is read, not per event (`engine/eventlog.py`).

A batch row's run is never looked at while it runs, and the reducer cost as much per event as the
rest of an append; these tests count its calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentcell.batch import map as agent_map
from agentcell.engine import complete_async
from agentcell.engine.eventlog import EventLog
from agentcell.events import RunWarning
from agentcell.formats.pieces import CHUNK
from agentcell.transcript import Transcript
from tests.tool_rounds import lookup, rounds_model

pytestmark = pytest.mark.anyio


def _count(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    seen: list[Any] = []
    original = Transcript.apply_event

    def apply_event(self: Transcript, event: Any, *, t: float, converted: Any = None) -> None:
        seen.append(event)
        original(self, event, t=t, converted=converted)

    monkeypatch.setattr(Transcript, "apply_event", apply_event)
    return seen


def _warning(i: int) -> RunWarning:
    return RunWarning(run_id="r", slot=None, message=f"w{i}")


def test_events_are_reduced_once_in_order_when_the_transcript_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    applied = _count(monkeypatch)
    log = EventLog()
    events = [_warning(i) for i in range(10)]
    for event in events:
        log.append(event)
    assert applied == []
    transcript = log.transcript
    assert applied == events
    assert log.transcript is transcript and applied == events  # read again: nothing new to reduce
    log.append(_warning(10))
    assert log.transcript is transcript and len(applied) == 11


def test_nothing_is_reduced_until_read_and_only_the_latest_conversions_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run nobody reads never pays for its transcript; what waits for a read is bounded: the events'
    times, and the wire conversions of the last `KEEP_CONVERTED` events."""
    from agentcell.events import TokenDelta

    applied = _count(monkeypatch)
    log = EventLog()
    count = EventLog.KEEP_CONVERTED * 2 + 5
    for i in range(count):
        log.append(_warning(i))
        log.append(TokenDelta(run_id="r", slot="s", text=f"{i} "))
    assert applied == []
    assert len(log._converted) == EventLog.KEEP_CONVERTED  # deltas are never converted; old ones let go
    transcript = log.transcript
    assert len(applied) == 2 * count and applied == list(log.events)
    assert log._converted == {}
    log.append(_warning(count))
    assert log.transcript is transcript and len(applied) == 2 * count + 1


def test_a_read_from_the_middle_of_a_run_of_deltas_resumes_where_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcell.events import TokenDelta

    applied = _count(monkeypatch)
    log = EventLog()
    deltas = [TokenDelta(run_id="r", slot="s", text=f"t{i} ") for i in range(CHUNK * 2 + 500)]
    for delta in deltas[: CHUNK + 300]:  # stored as a joined chunk, then pending pieces
        log.append(delta)
    _ = log.transcript
    for delta in deltas[CHUNK + 300 :]:
        log.append(delta)
    _ = log.transcript
    assert applied == deltas


async def test_a_batch_nobody_watches_never_reduces_a_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    applied = _count(monkeypatch)
    result = await agent_map("Go {{ item }} [[answer|use_tools]]", [str(i) for i in range(20)],
                             model=rounds_model(1), tools=[lookup], concurrency=4, journal=False)
    assert [r.status for r in result.rows] == ["completed"] * 20
    assert applied == []


async def test_a_run_read_at_its_end_has_every_event_in_its_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    applied = _count(monkeypatch)
    from agentcell.engine import start_run

    run = start_run("Go [[answer|use_tools]]", model=rounds_model(3), tools=[lookup], journal=False)
    result = await run.wait()
    assert result.status == "completed", result.error
    assert applied == []
    transcript = run.transcript
    assert applied == list(run.events_so_far)
    assert transcript.status == "completed"
    assert transcript.usage.tool_calls == 3


async def test_complete_still_gives_a_full_result() -> None:
    result = await complete_async("Go [[answer|use_tools]]", model=rounds_model(2), tools=[lookup], journal=False)
    assert result.status == "completed" and result.usage.tool_calls == 2


async def test_reading_the_transcript_late_does_not_convert_the_events_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each event is converted to wire as it is emitted (the sink's UTF-8 check, the views); the log keeps
    that conversion for the late reduction instead of converting every event a second time."""
    from agentcell.engine import start_run
    from agentcell.events import json as wire

    conversions: list[Any] = []
    original = wire.jsonable
    monkeypatch.setattr(wire, "jsonable", lambda value: (conversions.append(value), original(value))[1])
    run = start_run("Go [[answer|use_tools]]", model=rounds_model(5), tools=[lookup], journal=False)
    result = await run.wait()
    assert result.status == "completed", result.error
    before = len(conversions)
    transcript = run.transcript
    assert transcript.usage.tool_calls == 5
    assert len(conversions) - before <= 1, conversions[before:]  # the run's ending is converted apart
