"""A fork of a run whose approvals its view answered (`--approve writes` in a notebook) asks anew, never the old view.

`RunResult.fork()` on such a run's result starts the fork with a view of its own, whose Approve buttons answer
it (as `RunHandle.fork` and `%agent fork` do); where the fork has no view (a quiet handle), a call needing
approval is denied in one sentence instead of waiting for a click that cannot come.
"""

from __future__ import annotations

import asyncio

import pytest

from agentcell.engine.approvals import FORK_NO_APPROVER
from agentcell.events import ApprovalRequested, Event
from agentcell.frontends.handle import RunHandle, launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.options import RunOptions
from agentcell.template import compile_template

from .conftest import Counted, Tools

pytestmark = pytest.mark.anyio


def approve_in_view(handle: RunHandle) -> list[str]:
    """Click Approve in `handle`'s view for every call that asks (as the browser's message would)."""
    asked: list[str] = []
    widget = handle.widget
    assert widget is not None
    loop = asyncio.get_running_loop()

    def click(event: Event) -> None:
        if isinstance(event, ApprovalRequested):
            asked.append(event.call_id)
            message = {"kind": "approve", "call_id": event.call_id, "approved": True, "reason": None}
            loop.call_soon(widget._dispatch_frontend, message)

    handle.watch(click)
    return asked


async def approved_run(model: Counted, tools: Tools, *, quiet: bool = False) -> RunHandle:
    spec = LaunchSpec(template=compile_template("Find it. [[answer|use_tools=true]]"),
                      options=RunOptions(model=model.model(), tools=[tools.lookup_tool()], journal=False,
                                         approve_writes=True), quiet=quiet)
    handle = launch(spec)
    if not quiet:
        assert approve_in_view(handle) == []
    return handle


async def test_forking_the_result_of_a_run_approved_in_its_view_asks_in_the_forks_own_view() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    handle = await approved_run(model, tools)
    original = await handle
    assert original.status == "completed" and tools.calls == ["item 0", "item 1"]
    fork = original.fork(1, tool_results={"c0": "EDITED"})
    assert isinstance(fork, RunHandle) and fork.widget is not None and fork.widget is not handle.widget
    asked = approve_in_view(fork)
    result = await fork
    assert asked == ["c0", "c1"] and result.status == "completed"  # c0: the kept round's approval, shown again
    assert tools.calls == ["item 0", "item 1", "item 1"]  # the fork's round-2 call ran, approved in its view


async def test_a_fork_with_no_view_is_denied_in_one_sentence_rather_than_waiting() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    handle = await approved_run(model, tools)
    await handle
    quiet = handle.fork(1, tool_results={"c0": "EDITED"}, quiet=True)
    result = await quiet
    assert quiet.widget is None and result.status == "completed"
    assert tools.calls == ["item 0", "item 1"]  # the fork's call was not run
    assert FORK_NO_APPROVER.format(tool="lookup") in str(model.requests[-1])


async def test_an_explicit_approve_wins_over_the_view() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    handle = await approved_run(model, tools)
    original = await handle
    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.call_id)
        return True

    result = await original.fork(1, tool_results={"c0": "EDITED"}, approve=approve)
    assert asked == ["c1"] and result.status == "completed"
