"""Strong references to a shell's background runs, keyed by cell id.

Kept apart from `handle.py` (which imports the engine, pydantic-ai and anywidget) so that
`%load_ext agentcell` can create its registry without importing anything heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .handle import RunHandle


class RunRegistry:
    """Strong references to background runs, keyed by cell id, so re-running a cell replaces its run."""

    def __init__(self) -> None:
        self.runs: dict[str, RunHandle] = {}

    def add(self, key: str, handle: RunHandle) -> None:
        previous = self.runs.get(key)
        if previous is not None:
            previous.cancel()
        self.runs[key] = handle
        if handle.task is not None:
            handle.task.add_done_callback(lambda _t: self._forget(key, handle))

    def _forget(self, key: str, handle: RunHandle) -> None:
        if self.runs.get(key) is handle:
            del self.runs[key]

    def stop_all(self) -> int:
        """Cancel every run still going; returns how many were asked to stop."""
        live = [h for h in self.runs.values() if not h.done]
        for handle in live:
            handle.cancel()
        return len(live)
