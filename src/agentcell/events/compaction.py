"""The compaction events: a request about to pass the context threshold, and the summary that replaced older turns.

Re-exported by `run.py` (and so by `agentcell.events`), where `Event` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStarted:
    """The next request would pass the threshold: older turns are being summarized."""

    run_id: str
    slot: str | None
    tokens: int
    """Estimated tokens the request would have carried."""
    window: int
    threshold: float
    messages: int
    """How many messages the request would have carried."""
    kind: Literal["compaction_started"] = "compaction_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionFinished:
    """Older turns were replaced by a summary for the model (the run's record keeps them all)."""

    run_id: str
    slot: str | None
    before: int
    """Estimated tokens before compaction."""
    after: int
    """Estimated tokens after compaction."""
    messages_before: int
    messages_after: int
    summarized: int
    """How many messages the summary replaced (tool call/return pairs are never split)."""
    summary: str
    """The summary as the model now reads it."""
    kind: Literal["compaction_finished"] = "compaction_finished"
