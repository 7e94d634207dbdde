"""The one error a batch raises before any row starts.

`BatchError` is an `AgentcellError`, so the magic turns it into a one-line `UsageError` like every
other agentcell error: a bad `--over` value, a glob that matches nothing, a row that lacks a variable
the template reads, a tool that cannot travel to Dask workers.
"""

from __future__ import annotations

from ..errors import AgentcellError


class BatchError(AgentcellError):
    """The batch cannot start as asked; no row was run."""
