"""A plain `%%agent` cell in a real ipykernel against the real server, with jupyter_client playing the browser.

The model (SmolLM2-135M) is weak: these tests check what the run does (it streams, it completes, Stop
reaches the server), never what the answer says.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel.conftest import STOP_GUARD_S, open_session, start_cell
from tests.kernelclient import KernelSession
from tests.real_model.llama_server import LlamaServer

pytestmark = [pytest.mark.real_model, pytest.mark.kernel]

ANSWER_GUARD_S = 300
"""A hang guard for a whole answer (the server stops at its 4,096-token context at the latest), not a time limit."""

ENDED = ("completed", "stopped", "halted", "budget_exhausted", "failed")


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelSession]:
    session = open_session("python3")
    try:
        yield session
    finally:
        session.close()


def test_a_plain_cell_streams_and_completes(kernel: KernelSession, server: LlamaServer) -> None:
    mark = server.log_mark()
    _msg_id, comm = start_cell(kernel, f"%%agent -o run -m {server.model()}\nDescribe the sea in three sentences.\n[[answer]]")
    kernel.wait_until(lambda: comm.state.get("status") in ENDED, timeout=ANSWER_GUARD_S, what="run end")
    assert comm.state["status"] == "completed", comm.state.get("final", [])[-1:]
    # Streamed: the text reached the browser in several messages (the widget flushes every 50 ms), not at the end.
    with_text = [c for _, c in comm.custom if any(e.get("kind") == "token_delta" for e in c.get("events", []))]
    assert len(with_text) >= 2, with_text
    status, answer = kernel.run("print(run.status); print(repr(run.answer))").strip().split("\n", 1)
    assert status == "completed"
    assert eval(answer).strip() == kernel.streamed_text(comm).strip() != ""
    log = server.log_since(mark)
    assert log.count("POST /v1/chat/completions HTTP/1.1") == 1
    assert "Disconnected from client" not in log  # a finished stream is not a disconnect (cf. the Stop test)


def test_stop_mid_stream_closes_the_request_at_the_server(kernel: KernelSession, server: LlamaServer) -> None:
    mark = server.log_mark()
    _msg_id, comm = start_cell(
        kernel,
        f"%%agent -o run2 -m {server.model()}\n"
        "Write a long story about a dragon who learns to bake bread. Use at least five paragraphs.\n[[answer]]",
    )
    kernel.wait_until(lambda: len(kernel.streamed_text(comm).split()) >= 5, timeout=ANSWER_GUARD_S, what="five words")
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: comm.state.get("status") in ENDED, timeout=STOP_GUARD_S, what="run end")
    assert comm.state["status"] == "stopped"
    # The server notices a closed connection when it next writes a chunk, and says so in its log.
    kernel.wait_until(
        lambda: "Disconnected from client" in server.log_since(mark), timeout=STOP_GUARD_S, what="server disconnect"
    )
    status, partial = kernel.run("print(run2.status); print(repr(run2.answer))").strip().split("\n", 1)
    assert status == "stopped"
    assert eval(partial).strip() and kernel.streamed_text(comm).lstrip().startswith(eval(partial).strip()[:20])
    assert server.alive()
