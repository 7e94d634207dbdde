"""Stop at any point of a guarded run leaves no task behind.

Before: a Stop landing in one window of pydantic-ai's `Agent.run` (the run's `wrap_run` task had just
signalled ready) skipped the `finally` that releases that task, which then waited forever holding
the run; stopping a guarded run after 11-14, 28, 29 or 31 loop steps left one such task every time
(and `tests/engine/test_stop.py`'s guard case failed on a loaded machine). After: Stop reaches a
slot's agent run as an anyio scope cancellation (`engine/contain.py: cancel_cooperatively`), which
pydantic-ai's own shields handle.
"""

from __future__ import annotations

import asyncio

import pytest

from agentcell.engine import start_run
from tests.engine.conftest import Script, Sleep, routed, slot, tasks_now, template, verdict

pytestmark = pytest.mark.anyio


async def _left(baseline: set[asyncio.Task[object]]) -> list[asyncio.Task[object]]:
    """Tasks started since `baseline` still pending once the loop had many chances to finish them."""
    for _ in range(50):  # steps of the loop, not time: teardown that is merely slow still finishes
        await asyncio.sleep(0)
        left = [t for t in asyncio.all_tasks() - baseline if not t.done() and t is not asyncio.current_task()]
        if not left:
            return []
    return left


@pytest.mark.parametrize("steps", range(0, 40))
async def test_stop_after_any_number_of_loop_steps_leaves_no_task(steps: int) -> None:
    baseline = tasks_now()
    model = routed(Script(verdict(False, after=10)), Script([Sleep(10), "x"]))
    run = start_run(template(slot("g", "halt"), slot("answer")), model=model, journal=False)
    for _ in range(steps):
        await asyncio.sleep(0)
    run.cancel()
    assert (await run).status == "stopped"
    assert await _left(baseline) == []
