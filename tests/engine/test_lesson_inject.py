"""Injected faults (`inject=[...]`): they take the real paths (retry with back-off, the error fed back) and say "injected"."""

from __future__ import annotations

import pytest

import agentcell
from agentcell.engine import complete_async, stream
from agentcell.errors import AgentcellError
from agentcell.events import FaultInjected, Retrying, ToolCompleted
from agentcell.providers.faults import parse_fault

from .conftest import Call, Script, conversation, slot, template

pytestmark = pytest.mark.anyio


async def lookup(code: str) -> str:
    """Look a module up by its code."""
    return f"{code}: Dr Ada Byron"


async def test_an_injected_429_is_retried_once_and_labelled() -> None:
    script = Script(["Hello."])
    events = [e async for e in stream(template(slot("answer")), model=script.model, inject=["model=429:0.1"],
                                      journal=False)]
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1
    assert retries[0].reason.startswith("429") and "injected" in retries[0].reason
    assert retries[0].delay_s == pytest.approx(0.1)
    faults = [e for e in events if isinstance(e, FaultInjected)]
    assert [(f.target, f.fault, f.slot) for f in faults] == [("model", "429", "answer")]
    assert events[-1].status == "completed"  # type: ignore[union-attr]
    assert len(script.requests) == 1  # the injected 429 never reached the model


async def test_an_injected_500_is_retried_with_the_back_off_of_a_real_one() -> None:
    script = Script(["Hello."])
    events = [e async for e in stream(template(slot("answer")), model=script.model, inject=["model=500"],
                                      journal=False)]
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.reason == "500 (injected)" and 0.75 <= retry.delay_s <= 1.25  # RetryPolicy: 1 s ± 25 %
    assert events[-1].status == "completed"  # type: ignore[union-attr]


async def test_an_injected_tool_error_is_fed_back_to_the_model() -> None:
    script = Script([Call("lookup", {"code": "PSYC605"})], ["The lookup failed."])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                  inject=["lookup=error"], journal=False)
    assert result.status == "completed"
    fed = conversation(script.requests[1].messages)[-1]
    assert len(fed) == 1 and fed[0][:2] == ("return", "lookup")
    assert "InjectedFault" in str(fed[0][2]) and "injected" in str(fed[0][2])


async def test_a_tool_fault_fires_as_often_as_asked() -> None:
    script = Script([Call("lookup", {"code": "A"})], [Call("lookup", {"code": "B"})], [Call("lookup", {"code": "C"})],
                    ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                      inject=["lookup=timeout*2"], journal=False)]
    done = [e for e in events if isinstance(e, ToolCompleted)]
    assert [e.ok for e in done] == [False, False, True]
    assert all("TimeoutError" in str(e.error) and "injected" in str(e.error) for e in done[:2])


async def test_wrong_type_and_slow_tool_faults() -> None:
    script = Script([Call("lookup", {"code": "A"})], ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                                      inject=["lookup=wrong-type"], journal=False)]
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert done.ok and done.result == "12345"


async def test_a_dropped_stream_fails_the_slot_as_a_real_drop_does() -> None:
    script = Script(["Hello ", "there."])
    events = [e async for e in stream(template(slot("answer")), model=script.model, inject=["model=drop"],
                                      journal=False)]
    end = events[-1]
    assert end.status == "failed"  # type: ignore[union-attr]
    assert "mid-stream" in str(end.result.error) and "injected" in str(end.result.error)  # type: ignore[union-attr]


@pytest.mark.parametrize("spec", ["lookup", "model=error", "lookup=429", "lookup=slow", "model=slow:0", "x=error*0"])
def test_a_bad_spec_is_one_clear_sentence(spec: str) -> None:
    with pytest.raises(AgentcellError, match="--inject"):
        parse_fault(spec)


async def test_a_bad_spec_fails_before_any_request() -> None:
    script = Script(["never"])
    with pytest.raises(AgentcellError, match="--inject"):
        agentcell.start_run(template(slot("answer")), model=script.model, inject=["model=teapot"])
    assert script.requests == []
