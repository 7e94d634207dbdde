"""`Run.cancel()` at any time, from any thread; `resume()` starts at most one next segment.

Before: `cancel()` on a run whose loop had closed (a script's `asyncio.run` over, a terminal IPython
cell done) raised `RuntimeError: Event loop is closed`, though documented safe from any thread;
`resume()` twice started two segment-2 runs writing one journal and one transcript. After: `cancel()`
after the end is a no-op; a second `resume()` of the same segment raises `AgentcellError`.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentcell.engine import Run, start_run
from agentcell.errors import AgentcellError
from tests.engine.conftest import Script, Sleep, slot, template


def test_cancel_after_the_loop_closed_is_safe_from_any_thread() -> None:
    async def finished() -> Run:
        run = start_run(template(slot("a")), model=Script(["hi"]).model, journal=False)
        await run.wait()
        return run

    async def abandoned() -> Run:  # asyncio.run cancels it on the way out
        return start_run(template(slot("a")), model=Script([Sleep(30), "never"]).model, journal=False)

    for run in (asyncio.run(finished()), asyncio.run(abandoned())):
        run.cancel()
        thread = threading.Thread(target=run.cancel)
        thread.start()
        thread.join()
        assert run.done()


@pytest.mark.anyio
async def test_a_segment_is_resumed_at_most_once(tmp_path: Path) -> None:
    script = Script(["Start ", Sleep(30), "never"], ["Done."])
    run = start_run(template(slot("a")), model=script.model, journal=tmp_path)
    while not any(e.kind == "token_delta" for e in run.events_so_far):
        await asyncio.sleep(0.01)
    run.cancel()
    assert (await run.wait()).status == "stopped"
    second = run.resume()
    with pytest.raises(AgentcellError, match=f"run {run.run_id} segment 1 was already resumed as segment 2; resume that one instead"):
        run.resume()
    result = await second.wait()
    assert (result.status, result.answer, result.segment) == ("completed", "Done.", 2)
