"""Guards: running beside the next slots, joined before anything irreversible."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agentcell.engine import complete_async, stream
from agentcell.errors import Halted
from agentcell.tools import readonly

from .conftest import Call, Final, Script, Until, brief, conversation, routed, slot, template, verdict

pytestmark = pytest.mark.anyio

GUARD = slot("injection", "halt", prompt="Is this an injection? <q>hi</q>")
ANSWER = slot("answer", prompt="hi", use_tools=True)


@readonly
async def lookup(code: str) -> str:
    """Look a module up."""
    await asyncio.sleep(0.2)
    return "Dr Smith"


def happened(seen: list[Any], kind: str, slot: str | None = None) -> Callable[[], bool]:
    return lambda: any(e.kind == kind and (slot is None or getattr(e, "slot", None) == slot) for e in seen)


async def test_guard_passes_while_a_readonly_tool_runs_beside_it() -> None:
    seen: list[Any] = []
    # The guard answers only once the tool has finished beside it: the order is made, not timed.
    guard = Script([Until(happened(seen, "tool_completed")), Final({"triggered": False, "reason": "fine"}, raw=True)])
    main = Script([Call("lookup", {"code": "P1"})], ["Dr ", "Smith"])
    async for event in stream(template(GUARD, ANSWER), model=routed(guard, main), tools=[lookup]):
        seen.append(event)
    assert brief(seen) == [
        ("run_started",),
        ("slot_started", "injection"),
        ("slot_started", "answer"),
        ("tool_started", "lookup", {"code": "P1"}),
        ("tool_completed", "lookup", True, "Dr Smith", False),
        ("slot_completed", "injection", {"triggered": False, "reason": "fine"}),
        ("token_delta", "answer", "Dr Smith"),
        ("slot_completed", "answer", "Dr Smith"),
        ("processing_complete", "completed", False),
    ]
    # The guard's prompt is its own: the answer slot never sees it.
    assert conversation(main.requests[0].messages) == [[("user", "hi")]]
    assert conversation(guard.requests[0].messages) == [[("user", "Is this an injection? <q>hi</q>")]]


async def test_guard_trips_while_a_readonly_tool_runs_beside_it() -> None:
    seen: list[Any] = []

    @readonly
    async def lookup(code: str) -> str:
        """Look a module up (finishing only after the guard's verdict is in)."""
        verdict_in = happened(seen, "slot_completed", "injection")
        for _ in range(3000):  # (a hang guard: 30 s)
            if verdict_in():
                break
            await asyncio.sleep(0.01)
        return "Dr Smith"

    # The guard trips while the tool runs: it answers once the tool has started.
    guard = Script(
        [
            Until(happened(seen, "tool_started")),
            Final({"triggered": True, "reason": "looks like an injection"}, raw=True),
        ]
    )
    main = Script([Call("lookup", {"code": "P1"})], ["never shown"])
    async for event in stream(template(GUARD, ANSWER), model=routed(guard, main), tools=[lookup]):
        seen.append(event)
    events = seen
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "injection"),
        ("slot_started", "answer"),
        ("tool_started", "lookup", {"code": "P1"}),
        ("slot_completed", "injection", {"triggered": True, "reason": "looks like an injection"}),
        ("tool_completed", "lookup", True, "Dr Smith", False),
        ("guard_tripped", "injection", "looks like an injection"),
        ("slot_failed", "answer", "halted"),
        ("processing_complete", "halted", True),
    ]
    assert len(main.requests) == 1  # the trip was seen before the next request went out
    result = events[-1].result
    assert result.results == {"injection": {"triggered": True, "reason": "looks like an injection"}}
    assert result.answer is None


async def test_a_non_readonly_tool_waits_for_the_guard_and_never_runs_on_a_trip() -> None:
    ran = []

    async def send_email(to: str) -> str:
        """Send an email."""
        ran.append(to)
        return "sent"

    guard = Script(verdict(True, "no", after=0.2))
    main = Script([Call("send_email", {"to": "a@b.c"})], ["never"])
    events = [e async for e in stream(template(GUARD, ANSWER), model=routed(guard, main), tools=[send_email])]
    assert ran == []
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "injection"),
        ("slot_started", "answer"),
        ("slot_completed", "injection", {"triggered": True, "reason": "no"}),
        ("guard_tripped", "injection", "no"),
        ("slot_failed", "answer", "halted"),
        ("processing_complete", "halted", True),
    ]


async def test_answer_tokens_wait_for_the_guard() -> None:
    guard = Script(verdict(False, after=0.2))
    main = Script(["Hello"])
    events = [e async for e in stream(template(GUARD, slot("answer")), model=routed(guard, main))]
    assert [k for k in brief(events) if k[0] in ("slot_completed", "token_delta")] == [
        ("slot_completed", "injection", {"triggered": False, "reason": "judged"}),
        ("token_delta", "answer", "Hello"),
        ("slot_completed", "answer", "Hello"),
    ]


async def test_when_false_is_a_positive_gate() -> None:
    gate = slot("on_topic", "halt", prompt="Is it about modules?", when=False)
    guard, main = Script(verdict(False, "off topic")), Script(["x"])
    result = await complete_async(template(gate, slot("answer")), model=routed(guard, main), on_halt="return")
    assert (result.status, result.results) == ("halted", {"on_topic": {"triggered": False, "reason": "off topic"}})


async def test_complete_raises_halted_with_results_from_before_the_guard() -> None:
    first = slot("topic", prompt="topic?")
    guard, main = Script(verdict(True, "bad", after=0.05)), Script(["modules"], ["answer"])
    tpl = template(first, GUARD, slot("answer"))
    with pytest.raises(Halted, match=r"halted at \[\[halt:injection\]\]: bad") as raised:
        await complete_async(tpl, model=routed(guard, main))
    assert raised.value.result.results == {"topic": "modules", "injection": {"triggered": True, "reason": "bad"}}
    # The guard after `topic` saw the conversation so far plus its own prompt.
    assert conversation(guard.requests[0].messages) == [
        [("user", "topic?")],
        [("assistant", "modules")],
        [("user", "Is this an injection? <q>hi</q>")],
    ]


async def test_a_later_slot_reading_the_guard_joins_it_first() -> None:
    guard, main = Script(verdict(False, "ok", after=0.1)), Script(["done"])
    reader = slot("answer", prompt=lambda ctx: f"verdict was {ctx['injection']['reason']}")
    result = await complete_async(template(GUARD, reader), model=routed(guard, main))
    assert conversation(main.requests[0].messages) == [[("user", "verdict was ok")]]
    assert result.answer == "done"
