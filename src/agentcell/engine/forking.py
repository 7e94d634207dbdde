"""`fork_run`: start the fork `RunResult.fork` describes, from a recent run of this process.

The plan (what is kept, what is edited) is `fork.py`'s; the start is `setup.py`'s. The engine registers
`fork_run` in `result.FORKERS` when it is imported, so `RunResult.fork()` (a value below the engine)
reaches it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import ForkError
from ..journal import check_run_id
from ..options import RunOptions
from ..result import FORKERS, RunResult
from .approvals import ViewApprover, deny_without_view
from .fork import KEEP_RECENT, plan_fork, recent_run
from .runner import Run
from .setup import _Setup, launch_fork, prepare, running_loop_needed


def fork_run(
    original: RunResult,
    round: int,
    *,
    slot: str | None = None,
    tool_results: Mapping[str, Any] | None = None,
    message: str | None = None,
    model: Any = None,
    **options: Any,
) -> Run:
    """Start the fork `RunResult.fork` describes, on the running loop (see there and `fork.py`).

    Raises (nothing started): `ForkError` for a round, slot or call id the run lacks, or a run this
    process did not start; `TypeError` for an option `RunOptions` lacks; what `prepare` raises.
    """
    running_loop_needed()
    entry = recent_run(original.run_id)
    if entry is None:
        raise ForkError(
            f"run {original.run_id} was not started in this process (or is older than its last {KEEP_RECENT} runs), "
            "so its template and tools are unknown here; run it again and fork that run"
        )
    setup, logs = entry
    assert isinstance(setup, _Setup)
    plan = plan_fork(original, [e for log in logs for e in log.events], [s.name for s in setup.template.slots],
                     round=round, slot=slot, tool_results=tool_results, message=message)
    unknown = sorted(set(options) - set(RunOptions.__dataclass_fields__))
    if unknown:
        raise TypeError(f"fork() got an unexpected keyword argument {unknown[0]!r}; it takes RunOptions' fields")
    changed = dict(options, resume_from=None)
    if "approve" not in options and isinstance(setup.options.approve, ViewApprover):
        changed["approve"] = deny_without_view  # the original's buttons cannot answer the fork (ViewApprover)
    if model is not None:
        changed["model"] = model
    forked = prepare(setup.template, replace(setup.options, **changed)).setup
    rid = options.get("run_id") or uuid.uuid4().hex[:12]
    check_run_id(rid)
    return launch_fork(replace(forked, context=setup.context), rid, plan)


FORKERS.append(fork_run)
