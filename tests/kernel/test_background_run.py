"""`%%agent` in a real ipykernel, with jupyter_client playing the browser.

The cell must return at once while the run streams in the background, and a comm `stop`
message (what the Stop button sends) must cancel it, keeping the partial answer.
"""

from __future__ import annotations

import time

import pytest

from tests.kernel.conftest import STOP_GUARD_S, define_endless, start_cell
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel


GATED = """
import asyncio as _asyncio
from pydantic_ai.models.function import FunctionModel as _FunctionModel

gate = _asyncio.Event()

async def _gated_stream(messages, info):
    yield "PSYC605 is "
    await gate.wait()
    yield "Cognition and Emotion."

gated = _FunctionModel(stream_function=_gated_stream, model_name="gated")
"""
"""A model that streams half its answer, then waits until another cell opens the gate."""


def test_cell_returns_before_the_run_ends(kernel: KernelSession) -> None:
    kernel.run(GATED)
    msg_id, comm = start_cell(kernel, "%%agent -o run -m gated\nTell me about PSYC605.\n[[answer]]")
    kernel.wait_until(lambda: msg_id in kernel.replies, timeout=STOP_GUARD_S, what="execute_reply")
    assert kernel.replies[msg_id][1]["content"]["status"] == "ok"
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", timeout=STOP_GUARD_S, what="first token")
    # The run cannot end before the gate opens, and only another cell can open it: that this cell
    # runs at all shows the %%agent cell returned while its run was still going.
    assert kernel.run("print(run.status); gate.set()").strip() == "running"
    kernel.wait_until(lambda: comm.state.get("status") == "completed", timeout=STOP_GUARD_S, what="completed")
    out = kernel.run("print(run.status); print(run.answer)")
    status, answer = out.split("\n", 1)
    assert status == "completed"
    assert answer.strip() == kernel.streamed_text(comm).strip() == "PSYC605 is Cognition and Emotion."


def test_comm_stop_cancels_the_run_and_keeps_the_partial_answer(kernel: KernelSession) -> None:
    define_endless(kernel)
    _msg_id, comm = start_cell(kernel, "%%agent -o run2 -m endless\nExplain photosynthesis.\n[[answer]]")
    kernel.wait_until(lambda: len(kernel.streamed_text(comm).split()) >= 5, what="five words")
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    # The stream never ends by itself: `stopped` is the stop's doing (latency: bench/stop_latency.py).
    kernel.wait_until(lambda: comm.state.get("status") == "stopped", timeout=STOP_GUARD_S, what="stopped")
    text_at_stop = kernel.streamed_text(comm)
    time.sleep(1.0)
    kernel.pump(0.2)
    assert kernel.streamed_text(comm) == text_at_stop  # nothing streams after Stop
    out = kernel.run("print(run2.status); print(repr(run2.answer))")
    status, answer = out.strip().split("\n", 1)
    assert status == "stopped"
    partial = eval(answer)
    assert partial and text_at_stop.startswith(partial.strip()[:20])
    final = comm.state["final"]
    assert final[-1]["kind"] == "processing_complete" and final[-1]["status"] == "stopped"
