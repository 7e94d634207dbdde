"""Approval fails closed.

Before: `approve=` callbacks were read with `bool(answer)`, so `"deny"` (any non-empty string), `1` or
`ApprovalDecision(approved="no")` approved the call; a callback that raised failed the run. After:
only `True` or `ApprovalDecision(approved=True)` approves; anything else denies, and the denial's
reason (which the widget shows and the model reads) says what the callback answered.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentcell.engine import ApprovalDecision, start_run
from agentcell.events import ApprovalRequested, ApprovalResolved
from agentcell.tools import tool
from tests.engine.conftest import Call, Script, slot, template

pytestmark = pytest.mark.anyio
ran: list[str] = []


@tool(approve=True)
def delete(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return "deleted"


async def _resolved(answer: Any) -> tuple[ApprovalResolved, Any]:
    ran.clear()

    async def approve(request: ApprovalRequested) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    script = Script([Call("delete", {"path": "x"})], ["done"])
    run = start_run(template(slot("a", use_tools=True)), model=script.model, tools=[delete], approve=approve, journal=False)
    result = await run.wait()
    resolved = next(e for e in run.events_so_far if isinstance(e, ApprovalResolved))
    return resolved, result


@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        ("deny", "answered 'deny', which is neither True nor ApprovalDecision(approved=True)"),
        ("yes", "answered 'yes', which is neither True nor ApprovalDecision(approved=True)"),
        (1, "answered 1, which is neither True nor ApprovalDecision(approved=True)"),
        (None, "answered None, which is neither True nor ApprovalDecision(approved=True)"),
        (ApprovalDecision(approved="no"), "answered ApprovalDecision(approved='no', reason=None), which is neither True nor ApprovalDecision(approved=True)"),  # type: ignore[arg-type]
        (ValueError("approver is down"), "raised ValueError: approver is down"),
    ],
    ids=["deny-string", "yes-string", "one", "none", "decision-with-a-string", "raises"],
)
async def test_anything_but_an_explicit_approval_denies(answer: Any, shown: str) -> None:
    resolved, result = await _resolved(answer)
    reason = f"Denied: the approval callback {shown}; only an explicit approval runs delete."
    assert (resolved.approved, resolved.reason) == (False, reason)
    assert ran == [] and result.status == "completed"


@pytest.mark.parametrize("answer", [True, ApprovalDecision(approved=True)], ids=["true", "decision"])
async def test_an_explicit_approval_approves(answer: Any) -> None:
    resolved, _ = await _resolved(answer)
    assert resolved.approved is True and ran == ["x"]
