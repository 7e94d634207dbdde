"""`%%agent` in a real ipykernel, with jupyter_client playing the browser.

The cell must return at once while the run streams in the background, and a comm `stop`
message (what the Stop button sends) must cancel it, keeping the partial answer.
"""

from __future__ import annotations

import time

import pytest

from tests.kernel.conftest import start_cell
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel


def test_cell_returns_before_the_run_ends(kernel: KernelSession) -> None:
    msg_id, comm = start_cell(kernel, "%%agent -o run\nTell me about PSYC605 in a few sentences.\n[[answer]]")
    t_reply = kernel.wait_until(lambda: msg_id in kernel.replies, what="execute_reply")
    assert kernel.replies[msg_id][1]["content"]["status"] == "ok"
    t_first_text = kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    t_done = kernel.wait_until(lambda: comm.state.get("status") == "completed", what="completed")
    assert t_reply < t_first_text < t_done
    # The offline model streams ~80 words at ~22 words/s: the run lasts seconds, the reply does not.
    assert t_done - t_reply > 1.0
    out = kernel.run("print(run.status); print(run.answer)")
    status, answer = out.split("\n", 1)
    assert status == "completed"
    assert answer.strip() == kernel.streamed_text(comm).strip()
    assert "PSYC605" in answer


def test_comm_stop_cancels_the_run_and_keeps_the_partial_answer(kernel: KernelSession) -> None:
    _msg_id, comm = start_cell(kernel, "%%agent -o run2\nExplain photosynthesis.\n[[answer]]")
    kernel.wait_until(lambda: len(kernel.streamed_text(comm).split()) >= 5, what="five words")
    sent = kernel.send_custom(comm.comm_id, {"kind": "stop"})
    stopped = kernel.wait_until(lambda: comm.state.get("status") == "stopped", timeout=5, what="stopped")
    assert stopped - sent < 1.0  # measured ~5 ms on an idle kernel; generous for a loaded CI box
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
