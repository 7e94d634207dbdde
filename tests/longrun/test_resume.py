"""Stop, then Resume: finished slots are kept, the stopped slot goes on from its last finished round."""

from __future__ import annotations

import pytest

from agentcell import journal
from agentcell.engine import start_run
from agentcell.errors import AgentcellError
from agentcell.events import ProcessingComplete, RequestCompleted, RunResumed, TokenDelta, Usage
from tests.engine.conftest import Call, Script, Sleep, conversation, eventually, slot, template

pytestmark = pytest.mark.anyio


async def test_stop_then_resume_completes_with_one_ending_per_segment_and_whole_usage(journal_dir: object) -> None:
    looked: list[str] = []

    def lookup(q: str) -> str:
        """Look q up."""
        looked.append(q)
        return f"found {q}"

    script = Script(["A1"], [Call("lookup", {"q": "x"}, id="k1")], ["partial ", Sleep(10), "never"], ["B final"])
    tpl = template(slot("a", prompt="First?"), slot("b", prompt="Second?", use_tools=True))
    run = start_run(tpl, model=script.model, tools=[lookup])
    assert await eventually(lambda: any(isinstance(e, TokenDelta) and e.slot == "b" for e in run.events_so_far))
    run.cancel()
    first = await run
    assert (first.status, first.results, first.partial, first.segment) == ("stopped", {"a": "A1"}, {"b": "partial "}, 1)

    second_run = run.resume()
    second = await second_run
    assert (second.status, second.results, second.answer, second.segment) == (
        "completed",
        {"a": "A1", "b": "B final"},
        "B final",
        2,
    )
    assert second_run.run_id == run.run_id
    # Slot b went on from its finished tool round: no new prompt, no second lookup, partial text dropped.
    assert conversation(script.requests[3].messages) == [
        [("user", "First?")],
        [("assistant", "A1")],
        [("user", "Second?")],
        [("call", "lookup", {"q": "x"})],
        [("return", "lookup", "found x")],
    ]
    assert looked == ["x"]
    assert conversation(second.messages) == [
        [("user", "First?")],
        [("assistant", "A1")],
        [("user", "Second?")],
        [("call", "lookup", {"q": "x"})],
        [("return", "lookup", "found x")],
        [("assistant", "B final")],
    ]
    # One terminal event per segment; the second segment says what it kept.
    segments = [run.events_so_far, second_run.events_so_far]
    assert [sum(isinstance(e, ProcessingComplete) for e in events) for events in segments] == [1, 1]
    assert [e for e in second_run.events_so_far if isinstance(e, RunResumed)] == [
        RunResumed(run_id=run.run_id, segment=2, kept=("a",), restarting="b")
    ]
    assert [e.kind for e in second_run.events_so_far][:3] == ["run_started", "run_resumed", "slot_started"]
    # Usage covers both segments: every finished request, and the one stopped mid-stream.
    rows = [e for events in segments for e in events if isinstance(e, RequestCompleted)]
    assert [(e.slot, e.request, e.ended) for e in rows] == [
        ("a", 1, "completed"),
        ("b", 1, "completed"),
        ("b", 2, "stopped"),
        ("b", 1, "completed"),
    ]
    assert (first.usage.requests, first.usage.tool_calls, second.usage.requests, second.usage.tool_calls) == (
        3,
        1,
        4,
        1,
    )
    assert second.usage == sum((e.usage for e in rows), Usage()) + Usage(tool_calls=1)
    assert journal.usage_totals(run.run_id) == second.usage
    record = journal.load(run.run_id)
    assert record.finished and record.status == "completed"
    assert record.messages == second.messages


async def test_a_completed_run_cannot_be_resumed() -> None:
    run = start_run(template(slot("a")), model=Script(["done"]).model, journal=False)
    await run
    with pytest.raises(
        AgentcellError, match="ended 'completed'; only a stopped, failed or out-of-budget run can be resumed"
    ):
        run.resume()
