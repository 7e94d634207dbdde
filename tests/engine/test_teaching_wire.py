"""The sink's wire fields of a teaching event equal `wire_fields`, sharing its already-JSON payloads
(`engine/sink.py`, `_wire`): the same fields in the same order, the same JSON, nothing copied twice."""

from __future__ import annotations

import json

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from agentcell.engine import start_run
from agentcell.engine.sink import _wire
from agentcell.events.json import wire_fields
from agentcell.journal.writer import event_adapter

pytestmark = pytest.mark.anyio


def lookup(code: str) -> dict[str, object]:
    """Look a module up by its code."""
    return {"code": code, "lead": "Ada \u00e9", "years": [2024, 2025], "retired": False, "share": 0.5}


async def two_calls_then_answer(messages: list[ModelMessage], info: AgentInfo):  # type: ignore[no-untyped-def]
    if len(messages) < 4:
        yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"code": f"PSYC60{len(messages)}"}),
                                tool_call_id=f"c{len(messages)}")}
    else:
        yield "Ada leads them."


async def test_a_teaching_events_wire_fields_equal_the_full_conversion_and_share_its_payloads() -> None:
    run = start_run("Who leads PSYC605?\n[[answer|use_tools=true]]",
                    model=FunctionModel(stream_function=two_calls_then_answer), tools=[lookup], journal=False)
    await run
    teaching = [e for e in run.events_so_far if e.kind in ("model_request", "model_response")]
    assert len(teaching) == 6
    for event in teaching:
        (fields, valid, long_free), dumped = _wire(event)
        full = wire_fields(event)
        assert (fields, valid, long_free) == full
        assert dumped == event_adapter().dump_json(event)  # the journal writes the bytes the check made
        assert list(fields) == list(full[0])  # the same order, so the same bytes in the journal and on the wire
        assert json.dumps(fields) == json.dumps(full[0])
        payload = "messages" if event.kind == "model_request" else "parts"
        assert isinstance(fields[payload], list)
        assert all(a is b for a, b in zip(fields[payload], getattr(event, payload), strict=True))  # shared
