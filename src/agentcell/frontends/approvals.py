"""The widget's Approve / Deny buttons as a run's `approve=` callback."""

from __future__ import annotations

import asyncio

from ..engine import ApprovalDecision
from ..engine.approvals import ViewApprover
from ..events import ApprovalRequested


class WidgetApprovals(ViewApprover):
    """The `approve=` callback behind the widget's Approve / Deny buttons.

    Each request waits on a future that a button click resolves; a Stop cancels the waiting task and
    with it the future, so a stopped run never hangs on an unanswered approval.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pending: dict[str, asyncio.Future[ApprovalDecision]] = {}

    async def __call__(self, request: ApprovalRequested) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = self._loop.create_future()
        self._pending[request.call_id] = future
        try:
            return await future
        finally:
            self._pending.pop(request.call_id, None)

    def resolve(self, call_id: str, approved: bool, reason: str | None) -> None:
        """A click: settle the waiting request (unknown or already settled ids are ignored)."""
        future = self._pending.get(call_id)
        if future is not None and not future.done():
            future.set_result(ApprovalDecision(approved=approved, reason=reason or None))
