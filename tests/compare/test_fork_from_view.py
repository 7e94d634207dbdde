"""The widget's "edit and re-run from here" message, as the kernel handles it (`RunHandle.fork_from_view`)."""

from __future__ import annotations

import pytest

from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.options import RunOptions
from agentcell.template import compile_template

from .conftest import Counted, Tools

pytestmark = pytest.mark.anyio


async def started(model: Counted, tools: Tools):
    spec = LaunchSpec(template=compile_template("Find it. [[answer|use_tools=true]]"),
                      options=RunOptions(model=model.model(), tools=[tools.lookup_tool()], journal=False))
    handle = launch(spec)
    await handle
    return handle


async def test_a_new_tool_result_from_the_view_starts_a_fork_at_that_calls_round() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    handle = await started(model, tools)
    model.requests.clear()
    handle.fork_from_view({"kind": "fork", "call_id": "c0", "value": "EDITED"})
    fork = handle.forks[-1]
    result = await fork
    assert len(model.requests) == 2  # rounds 2 and 3: round 1 (the call c0) was kept
    assert result.fork_round == 1 and result.edited == ("lookup (c0)",) and fork.widget is not None
    assert tools.calls == ["item 0", "item 1", "item 1"]


async def test_a_new_user_message_from_the_view_asks_the_slot_again() -> None:
    model, tools = Counted("m", rounds=0), Tools()
    handle = await started(model, tools)
    model.requests.clear()
    handle.fork_from_view({"kind": "fork", "slot": "answer", "value": "Find the other one."})
    result = await handle.forks[-1]
    assert result.fork_round == 0 and result.edited == ("message",)
    assert "Find the other one." in str(model.requests[0])


async def test_a_call_id_the_run_lacks_is_said_in_the_view_and_starts_nothing() -> None:
    model, tools = Counted("m", rounds=1), Tools()
    handle = await started(model, tools)
    assert handle.widget is not None
    handle.fork_from_view({"kind": "fork", "call_id": "c9", "value": "x"})
    assert handle.forks == []
    handle.widget.flush()
    notes = [e["message"] for e in handle.widget.wire_snapshot() if e.get("kind") == "run_warning"]
    assert notes[-1] == f"could not fork: run {handle.run_id} has no tool call 'c9'"
