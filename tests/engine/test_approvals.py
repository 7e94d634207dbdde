"""Approvals through pydantic-ai's deferred tools."""

from __future__ import annotations

import pytest

from agentcell.engine import ApprovalDecision, complete_async, stream
from agentcell.engine.approvals import NO_APPROVER
from agentcell.events import ApprovalRequested
from agentcell.tools import readonly, tool

from .conftest import Call, Script, brief, conversation, slot, template

pytestmark = pytest.mark.anyio

ran: list[str] = []


@tool(approve=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


async def test_approved_call_runs() -> None:
    ran.clear()
    asked: list[ApprovalRequested] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request)
        return True

    script = Script([Call("delete_file", {"path": "a.txt"}, id="d1")], ["done"])
    tpl = template(slot("answer", use_tools=True))
    events = [e async for e in stream(tpl, model=script.model, tools=[delete_file], approve=approve)]
    assert brief(events)[2:6] == [
        ("approval_requested", "delete_file", {"path": "a.txt"}),
        ("approval_resolved", True, None),
        ("tool_started", "delete_file", {"path": "a.txt"}),
        ("tool_completed", "delete_file", True, "deleted a.txt", False),
    ]
    assert ran == ["a.txt"] and asked[0].call_id == "d1"


async def test_denial_reason_reaches_the_model_and_the_tool_never_runs() -> None:
    ran.clear()

    async def deny(request: ApprovalRequested) -> ApprovalDecision:
        return ApprovalDecision(approved=False, reason="not that file")

    script = Script([Call("delete_file", {"path": "a.txt"})], ["ok, I won't"])
    tpl = template(slot("answer", use_tools=True))
    events = [e async for e in stream(tpl, model=script.model, tools=[delete_file], approve=deny)]
    assert ran == []
    assert ("approval_resolved", False, "not that file") in brief(events)
    assert conversation(script.requests[1].messages)[-1] == [
        ("return", "delete_file", "The user denied the call to delete_file: not that file")
    ]


async def test_without_an_approver_the_call_is_denied_with_a_clear_reason() -> None:
    ran.clear()
    script = Script([Call("delete_file", {"path": "a.txt"})], ["ok"])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[delete_file])
    assert ran == [] and result.status == "completed"
    assert conversation(script.requests[1].messages)[-1] == [
        ("return", "delete_file", NO_APPROVER.format(tool="delete_file"))
    ]


async def test_approve_writes_asks_for_every_tool_not_marked_readonly() -> None:
    @readonly
    def read(path: str) -> str:
        """Read."""
        return "text"

    def write(path: str) -> str:
        """Write."""
        return "written"

    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return True

    script = Script([Call("read", {"path": "a"}), Call("write", {"path": "a"})], ["ok"])
    await complete_async(
        template(slot("answer", use_tools=True)),
        model=script.model,
        tools=[read, write],
        approve=approve,
        approve_writes=True,
    )
    assert asked == ["write"]
