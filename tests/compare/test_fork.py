"""`RunResult.fork`: rounds 1..N kept exactly (no model request, no tool run), an edit, then live from N+1."""

from __future__ import annotations

import asyncio

import pytest
from pydantic_ai.messages import ModelRequest, ToolReturnPart

from agentcell import complete_async
from agentcell.engine import start_run
from agentcell.errors import ForkError

from .conftest import Counted, Tools

pytestmark = pytest.mark.anyio

TEMPLATE = "Find it. [[answer|use_tools=true]]"


def results_in(request: list) -> list[str]:
    return [str(p.content) for m in request if isinstance(m, ModelRequest) for p in m.parts
            if isinstance(p, ToolReturnPart)]


async def original(model: Counted, tools: Tools):
    return await complete_async(TEMPLATE, model=model.model(), tools=[tools.lookup_tool()], journal=False)


async def test_a_fork_at_round_2_sends_only_the_requests_from_round_3_with_the_edited_value() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    first = await original(model, tools)
    assert first.status == "completed" and len(model.requests) == 3 and tools.calls == ["item 0", "item 1"]
    model.requests.clear()

    forked = await first.fork(2, tool_results={"c1": "EDITED"})

    assert len(model.requests) == 1  # round 3 only: rounds 1-2 came from the original's record
    assert tools.calls == ["item 0", "item 1"]  # no tool of rounds 1-2 ran again
    assert results_in(model.requests[0]) == ["result for item 0", "EDITED"]
    assert forked.answer == "m read: EDITED"
    assert (forked.forked_from, forked.fork_round, forked.edited) == (first.run_id, 2, ("lookup (c1)",))


async def test_the_forks_transcript_shows_rounds_1_and_2_kept_and_marks_the_fork_point() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    first = await original(model, tools)
    run = first.fork(2, tool_results={"lookup": "EDITED"})
    await run
    slot = run.transcript.slots["answer"]
    tool_items = [i for r in sorted(slot.rounds) for i in slot.rounds[r].items if i["type"] == "tool"]
    assert [t["result"] for t in tool_items] == ["result for item 0", "EDITED"]
    markers = [i for r in slot.rounds.values() for i in r.items if i["type"] == "resumed"]
    assert markers and markers[0]["forked_from"] == first.run_id and markers[0]["fork_round"] == 2
    assert max(slot.rounds) == 3  # the live round is numbered after the kept ones


async def test_a_stopped_run_forks_the_same_way() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    model.gate, model.hold_from = asyncio.Event(), 3  # rounds 1-2 answer, round 3 waits in flight
    run = start_run(TEMPLATE, model=model.model(), tools=[tools.lookup_tool()], journal=False)
    while len(model.requests) < 3:
        await asyncio.sleep(0)
    run.cancel()
    stopped = await run
    assert stopped.status == "stopped"
    model.gate = None
    model.requests.clear()
    forked = await stopped.fork(2, tool_results={"c1": "EDITED"})
    assert forked.status == "completed" and len(model.requests) == 1 and forked.answer == "m read: EDITED"


async def test_a_fork_onto_another_model_asks_only_that_model() -> None:
    first_model, other, tools = Counted("small", rounds=2), Counted("large", rounds=2), Tools()
    first = await original(first_model, tools)
    first_model.requests.clear()
    forked = await first.fork(1, model=other.model())
    assert first_model.requests == [] and len(other.requests) == 2  # rounds 2 and 3, on the other model
    assert forked.answer == "large read: result for item 1" and forked.model == "large"
    assert tools.calls == ["item 0", "item 1", "item 1"]  # round 2's call ran anew, round 1's did not


async def test_an_edited_user_message_reaches_the_model() -> None:
    model, tools = Counted("m", rounds=1), Tools()
    first = await original(model, tools)
    model.requests.clear()
    await first.fork(0, message="Find the other thing.")
    prompt = [p.content for p in model.requests[0][0].parts if hasattr(p, "content")]
    assert "Find the other thing." in prompt and not any("Find it." in str(p) for p in prompt)


@pytest.mark.parametrize(
    ("round_", "edits", "says"),
    [
        (7, None, "has no round 7 to fork [[answer]] at: pick a round from 0 to 2"),
        (3, None, "has no round 3"),
        (2, {"c9": "x"}, "round 2 of [[answer]] has no tool call 'c9'; its calls are c1 (lookup)"),
        (0, {"c0": "x"}, "round 0 of [[answer]] has no tool results to edit"),
    ],
)
async def test_a_round_or_call_the_run_lacks_is_one_sentence(round_: int, edits: dict | None, says: str) -> None:
    model, tools = Counted("m", rounds=2), Tools()
    first = await original(model, tools)
    model.requests.clear()
    with pytest.raises(ForkError) as caught:
        first.fork(round_, tool_results=edits)
    message = str(caught.value)
    assert says in message and "\n" not in message and model.requests == []


async def test_an_unknown_slot_names_the_slots_there_are() -> None:
    first = await original(Counted("m"), Tools())
    with pytest.raises(ForkError, match=r"no answer slot \[\[summary\]\] to fork \(its answer slots: \[\[answer\]\]\)"):
        first.fork(1, slot="summary")
