"""The `final` trait as sent to the browser carries a long answer once (`shared_texts.py`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell import stream
from agentcell.events import ProcessingComplete
from agentcell.frontends.widget.shared_texts import REF_KEY, SHARE_MIN, TABLE_KIND, pack, unpack
from agentcell.frontends.widget.widget import AgentWidget

ANSWER_WORDS = [f"word{i} " for i in range(1_500)] + ["\n\n## The end\n"]
ANSWER = "".join(ANSWER_WORDS)


async def _stream_fn(messages: list[Any], info: AgentInfo) -> AsyncIterator[str]:
    for word in ANSWER_WORDS:
        yield word


async def _run(widget: AgentWidget) -> None:
    async for ev in stream("Write it. [[answer]]", model=FunctionModel(stream_function=_stream_fn)):
        widget.apply(ev)
        if isinstance(ev, ProcessingComplete):
            assert ev.result.answer == ANSWER


@pytest.fixture(scope="module")
def finished() -> AgentWidget:
    widget = AgentWidget()
    asyncio.run(_run(widget))
    return widget


def test_the_sent_final_trait_carries_the_answer_once(finished: AgentWidget) -> None:
    plain = json.dumps(finished.final)
    assert plain.count("word1499") >= 5  # streamed text, slot value, answer, two transcripts
    sent = finished.get_state("final")["final"]
    wire = json.dumps(sent)
    assert wire.count("word1499") == 1
    assert len(wire) < len(plain) / 3
    head = sent[0]
    assert head["kind"] == TABLE_KIND and head["texts"] == [ANSWER]
    assert sent[-1]["kind"] == "processing_complete" and sent[-1]["answer"] == {REF_KEY: 0}
    assert sent[-1]["transcript"]["openai"][-1]["content"] == {REF_KEY: 0}
    # `events` names exactly the events holding a reference.
    holders = [i for i, ev in enumerate(sent) if i and REF_KEY in json.dumps(ev)]
    assert head["events"] == holders and len(holders) >= 3


def test_unpacking_the_sent_trait_gives_the_log_back(finished: AgentWidget) -> None:
    sent = json.loads(json.dumps(finished.get_state("final")["final"]))
    assert unpack(sent) == json.loads(json.dumps(finished.final))
    assert finished.final[0]["kind"] == "run_started"  # Python keeps the plain log (the twin reads it)


def test_short_or_unrepeated_texts_are_sent_as_they_are() -> None:
    short = "x" * (SHARE_MIN - 1)
    once = "y" * SHARE_MIN
    events = [{"kind": "a", "text": short}, {"kind": "b", "text": short, "other": once}]
    assert pack(events) is events
    assert unpack(events) is events


def test_data_shaped_like_a_reference_is_never_packed() -> None:
    long = "z" * SHARE_MIN
    events = [{"kind": "a", "text": long}, {"kind": "b", "args": {REF_KEY: 0}, "text": long}]
    assert pack(events) is events  # a reader could not tell the user's dict from a reference
    packed = pack([{"kind": "a", "text": long}, {"kind": "b", "args": {REF_KEY: 0, "x": 1}, "text": long}])
    assert packed[0]["texts"] == [long]
    assert unpack(packed)[1] == {"kind": "b", "args": {REF_KEY: 0, "x": 1}, "text": long}


def test_a_value_nested_deeper_than_the_stack_is_sent_plain_not_lost() -> None:
    """A tool may return anything, nested without end: packing it must not fail the run's last message."""
    deep: Any = "leaf"
    for _ in range(5_000):
        deep = [deep]
    long = "x" * (SHARE_MIN + 1)
    events = [{"kind": "slot_completed", "value": long}, {"kind": "tool_returned", "value": deep},
              {"kind": "processing_complete", "answer": long}]
    packed = pack(events)  # the deep value is in no event that holds the answer: not walked, sent as it is
    assert packed[0]["texts"] == [long] and packed[2] is events[1]
    assert unpack(packed)[1] is events[1]
    holding = [*events[:2], {"kind": "processing_complete", "answer": long, "transcript": {"openai": deep}}]
    assert pack(holding) is holding  # in an event that does: sent plain


def test_only_events_own_fields_and_the_transcript_are_looked_at(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of many tool rounds with short texts: one look at each event's fields, no walk of their data."""
    from agentcell.frontends.widget import shared_texts

    walked: list[Any] = []
    count = shared_texts._count
    monkeypatch.setattr(shared_texts, "_count", lambda value, *a, **k: (walked.append(value), count(value, *a, **k))[1])
    rounds = [{"kind": "model_request_sent", "messages": [{"content": "q" * 5_000}] * 3, "round": i} for i in range(500)]
    events = [*rounds, {"kind": "processing_complete", "answer": "done", "transcript": {"openai": []}}]
    assert pack(events) is events and walked == []
