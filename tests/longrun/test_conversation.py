"""Conversations across cells (`--continue`, `history=`): each run carries the whole chain."""

from __future__ import annotations

import pytest

from agentcell.engine import complete_async
from tests.engine.conftest import Call, Script, conversation, slot, template

pytestmark = pytest.mark.anyio


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city} has 2M people"


async def test_three_cell_chain_sends_the_whole_prior_transcript() -> None:
    one = Script([Call("lookup", {"city": "Paris"}, id="c1")], ["Paris is big."])
    r1 = await complete_async(
        template(slot("a", prompt="Tell me about Paris.", use_tools=True)), model=one.model, tools=[lookup]
    )
    two = Script(["Lyon is smaller."])
    r2 = await complete_async(template(slot("b", prompt="And Lyon?")), model=two.model, history=r1.messages)
    three = Script(["Paris, then Lyon."])
    r3 = await complete_async(template(slot("c", prompt="Which was first?")), model=three.model, history=r2.messages)

    cell1 = [
        [("user", "Tell me about Paris.")],
        [("call", "lookup", {"city": "Paris"})],
        [("return", "lookup", "Paris has 2M people")],
        [("assistant", "Paris is big.")],
    ]
    cell2 = [[("user", "And Lyon?")], [("assistant", "Lyon is smaller.")]]
    assert conversation(three.requests[0].messages) == [*cell1, *cell2, [("user", "Which was first?")]]
    # Each result is the whole conversation so far, with the history it was seeded with in front.
    assert conversation(r3.messages) == [
        *cell1,
        *cell2,
        [("user", "Which was first?")],
        [("assistant", "Paris, then Lyon.")],
    ]
    assert (r1.history_length, r2.history_length, r3.history_length) == (0, 4, 6)
    assert r3.messages[:6] == r2.messages
    assert [m["role"] for m in r3.to_openai()] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert r3.results == {"c": "Paris, then Lyon."}  # values stay per run
