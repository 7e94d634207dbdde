"""The real-kernel test harness itself, where it raced or leaked.

Before: `KernelSession.run` read a cell's output 50 ms after its `execute_reply`; ipykernel 6.29 on a
loaded machine sends the output later than that, so the fixture's `print(ipykernel.__version__)`
came back empty and every test of that kernel errored (10 at once). A fixture whose setup failed
never closed its session, so its zmq sockets warned (`ResourceWarning: Unclosed socket`) when the
garbage collector found them, during some later test, which `filterwarnings = error` failed. After:
`run` waits for the request's `status: idle` on iopub (published after all its output); a session
that fails to start or to set up is closed before the error propagates.
"""

from __future__ import annotations

import queue
import time
from collections import deque
from typing import Any

import pytest

from tests.kernel.conftest import open_session
from tests.kernelclient import KernelSession


class SlowIOPub:
    """A client whose shell reply comes at once and whose output comes later (as 6.29 under load does)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.iopub: deque[tuple[float, dict[str, Any]]] = deque()
        self.shell: deque[dict[str, Any]] = deque()

    def send(self, msg_id: str, text: str) -> None:
        parent = {"msg_id": msg_id}
        self.shell.append({"parent_header": parent, "msg_type": "execute_reply", "content": {"status": "ok"}})
        later = time.monotonic() + self.delay
        self.iopub.append((later, {"msg_type": "stream", "parent_header": parent, "content": {"name": "stdout", "text": text}}))
        self.iopub.append((later, {"msg_type": "status", "parent_header": parent, "content": {"execution_state": "idle"}}))

    def get_iopub_msg(self, timeout: float) -> dict[str, Any]:
        if self.iopub and self.iopub[0][0] <= time.monotonic():
            return self.iopub.popleft()[1]
        time.sleep(min(timeout, 0.002))
        raise queue.Empty

    def get_shell_msg(self, timeout: float) -> dict[str, Any]:
        if self.shell:
            return self.shell.popleft()
        raise queue.Empty


def _session(client: SlowIOPub) -> KernelSession:
    session = object.__new__(KernelSession)
    session.kc, session.comms, session.outputs, session.replies, session.idle = client, {}, {}, {}, set()
    session.execute = lambda code, cell_id=None, subshell_id=None: (client.send("m1", "7.4\n"), "m1")[1]  # type: ignore[method-assign]
    return session


def test_run_waits_for_the_output_that_follows_the_reply() -> None:
    assert _session(SlowIOPub(delay=0.3)).run("print(version)") == "7.4\n"


class FailingSetup(KernelSession):
    closed = 0

    def __init__(self, **kwargs: Any) -> None:  # no kernel: only what open_session does with it
        self.version = ()

    def run(self, code: str, *, timeout: float = 60) -> str:
        raise TimeoutError("no reply")

    def close(self) -> None:
        FailingSetup.closed += 1


def test_a_session_whose_setup_fails_is_closed() -> None:
    with pytest.raises(TimeoutError, match="no reply"):
        open_session("python3", session_type=FailingSetup)
    assert FailingSetup.closed == 1
