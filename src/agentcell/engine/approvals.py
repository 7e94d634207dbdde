"""Approvals on pydantic-ai's deferred tools, resolved inside the same run.

A tool with `requires_approval=True` is deferred by pydantic-ai; its `handle_deferred_tool_calls` hook
(the one capability of an agent whose tools need approval, `agents._Approvals`) hands the pending calls
to `resolve_approvals` through the run's binding, we ask the
`approve=` callback (the widget's buttons, or API code) one call at a time, and the answers go back as
`ToolApproved`/`ToolDenied`. A denial's reason is what the model reads as the tool result. Approval
fails closed: only `True` or `ApprovalDecision(approved=True)` approves; any other answer (`"deny"`,
`1`, `None`) or a callback that raises denies, and the reason says which it was. Stop during the wait
cancels the run like anywhere else.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_core import to_jsonable_python

from ..events import ApprovalRequested, ApprovalResolved
from .contain import PROCESS_EXITS, Escaped, describe
from .state import ApprovalDecision, RunState

NO_APPROVER = (
    "Denied: {tool} needs approval and nobody can give it in this run "
    "(pass approve= to the API, or run the cell with %%agent to get Approve/Deny buttons)."
)
FORK_NO_APPROVER = (
    "Denied: {tool} needs approval and this fork has no view to ask in (the original run's Approve/Deny buttons "
    "answer only the original); fork with handle.fork(...) or %agent fork to get buttons, or pass approve=."
)


class ViewApprover(ABC):
    """Base of an `approve=` callback that answers through one view's buttons (the widget's `WidgetApprovals`).

    A fork does not inherit it (`fork_run`): the fork's approval requests go to the fork's own log, which the
    original's view does not show, so a call would wait for a click that cannot come.
    """

    @abstractmethod
    async def __call__(self, request: ApprovalRequested) -> ApprovalDecision:
        """Wait for the view's answer to `request`."""


async def deny_without_view(request: ApprovalRequested) -> ApprovalDecision:
    """A fork's approver when the original's was a view's and the fork has none: deny, saying why."""
    return ApprovalDecision(approved=False, reason=FORK_NO_APPROVER.format(tool=request.tool_name))


async def resolve_approvals(
    state: RunState, slot: str, requests: DeferredToolRequests, server_of: Callable[[str], str | None] | None = None
) -> DeferredToolResults:
    """Resolve a slot's pending approval requests through `state.approve`, one call at a time.

    The approval capability of the slot's agent (`agents._Approvals`, only on agents whose tools need
    approval) calls this: pydantic-ai's `HandleDeferredToolCalls` would do the same as a capability of its
    own, on every agent, which costs a context copy per hook of every run, approvals or not. `server_of`
    names a tool's MCP server (`SlotCalls.server_of`), which the approval card shows.
    """
    results = DeferredToolResults()
    for call in requests.approvals:
        await state.guards.join()  # never ask a person about a call made from rejected input
        decision = await _decide(state, slot, call.tool_call_id, call.tool_name, call.args_as_dict(),
                                 None if server_of is None else server_of(call.tool_name))
        results.approvals[call.tool_call_id] = (
            ToolApproved() if decision.approved else ToolDenied(_denial(call.tool_name, decision))
        )
    return results


async def _decide(
    state: RunState, slot: str, call_id: str, tool: str, args: dict[str, Any], server: str | None = None
) -> ApprovalDecision:
    request = ApprovalRequested(
        run_id=state.run_id,
        slot=slot,
        call_id=call_id,
        tool_name=tool,
        args=to_jsonable_python(args, fallback=repr),
        server=server,
    )
    state.emit(request)
    if state.approve is None:
        decision = ApprovalDecision(approved=False, reason=NO_APPROVER.format(tool=tool))
    else:
        try:
            answer: object = await state.approve(request)
        except PROCESS_EXITS as exc:  # see contain.py: the slot fails, the loop lives
            raise Escaped(exc) from exc
        except Exception as exc:  # fail closed: a broken approver never lets a call through
            answer = exc
        decision = _checked(tool, answer)
    state.emit(
        ApprovalResolved(
            run_id=state.run_id,
            slot=slot,
            call_id=call_id,
            approved=decision.approved,
            reason=decision.reason,
        )
    )
    return decision


def _checked(tool: str, answer: object) -> ApprovalDecision:
    """Fail closed: only `True` or an `ApprovalDecision(approved=True)` approves; anything else denies, saying why."""
    if answer is True:
        return ApprovalDecision(approved=True)
    if isinstance(answer, ApprovalDecision) and answer.approved is True:
        return answer
    if answer is False:
        return ApprovalDecision(approved=False)
    if isinstance(answer, ApprovalDecision) and answer.approved is False:
        return ApprovalDecision(approved=False, reason=None if answer.reason is None else str(answer.reason))
    if isinstance(answer, Exception):
        why = f"the approval callback raised {describe(answer)}"
    else:
        shown = _shown(answer)
        why = f"the approval callback answered {shown}, which is neither True nor ApprovalDecision(approved=True)"
    return ApprovalDecision(approved=False, reason=f"Denied: {why}; only an explicit approval runs {tool}.")


def _shown(value: object) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__}"
    return text if len(text) <= 80 else f"{text[:80]}…"


def _denial(tool: str, decision: ApprovalDecision) -> str:
    if decision.reason is None:
        return f"The user denied the call to {tool}."
    if decision.reason.startswith("Denied:"):
        return decision.reason
    return f"The user denied the call to {tool}: {decision.reason}"
