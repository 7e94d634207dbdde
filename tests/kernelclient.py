"""A real ipykernel driven through jupyter_client, with the client playing the browser.

The client executes cells, watches iopub for widget comms, and sends the same `comm_msg`s a
browser sends (custom `{"kind": "stop"}`, snapshot requests). It never calls
`wait_for_ready()`'s iopub flush loop while a run streams (that blocks for the whole run, see
docs/kernel-and-loop.md), so readiness is checked with a `kernel_info` round trip instead.
"""

from __future__ import annotations

import os
import queue
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
from jupyter_client.manager import KernelManager

Msg = dict[str, Any]


def find_k6_kernel(root: Path) -> None:
    """Let jupyter_client find the ipykernel 6.29 kernelspec (`agentcell-k6`) that `scripts/setup` registers
    under `root/.jupyter-k6/` (read at each lookup)."""
    k6_dir = root / ".jupyter-k6"
    if k6_dir.exists():
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(k6_dir), os.environ.get("JUPYTER_PATH")]))


def kernel_available(name: str) -> bool:
    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return False
    return True


@dataclass
class WidgetComm:
    """What the client has seen of one anywidget model."""

    comm_id: str
    state: dict[str, Any] = field(default_factory=dict)
    custom: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    updates: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    bytes_in: int = 0


class KernelSession:
    """One kernel process plus a client that records iopub traffic by comm and by request."""

    def __init__(self, *, kernel_name: str = "python3", extra_env: dict[str, str] | None = None) -> None:
        self.km = KernelManager(kernel_name=kernel_name)
        env = dict(__import__("os").environ)
        env.update(extra_env or {})
        self.comms: dict[str, WidgetComm] = {}
        self.outputs: dict[str, list[Msg]] = {}
        self.replies: dict[str, tuple[float, Msg]] = {}
        self.idle: set[str] = set()
        self.display_updates: list[Msg] = []
        """Every `update_display_data`, in arrival order (a saved output's updates, by display id)."""
        """Requests whose `status: idle` arrived on iopub: every output of theirs arrived before it."""
        self.version: tuple[int, ...] = ()
        self.kc: Any = None
        self.km.start_kernel(env=env)
        try:
            self.kc = self.km.client()
            self.kc.start_channels()
            self._wait_kernel_info()
        except BaseException:
            # A session that never started must still close its sockets and its kernel: left to the
            # garbage collector, the sockets warn (ResourceWarning) in whatever test runs then.
            self.close()
            raise

    def _wait_kernel_info(self, timeout: float = 120) -> None:
        """Wait until the kernel answers on shell *and* iopub is connected.

        A zmq SUB socket drops whatever is published before its connection is made (the "slow joiner"):
        waiting for the shell reply alone let the first request's `idle` status be lost on a cold
        machine, and `run("%load_ext agentcell")` then waited for it forever. jupyter_client's
        `wait_for_ready` re-sends kernel_info until an iopub message arrives too.
        """
        self.kc.wait_for_ready(timeout=timeout)

    def close(self) -> None:
        """Stop the channels (closing their sockets) and the kernel; safe to call twice."""
        try:
            if self.kc is not None:
                self.kc.stop_channels()
        finally:
            if self.km.has_kernel:
                self.km.shutdown_kernel(now=True)

    # ---- iopub / shell pumping -------------------------------------------------------------
    def pump(self, timeout: float = 0.05) -> None:
        """Drain whatever iopub and shell messages have arrived."""
        end = time.monotonic() + timeout
        while True:
            remaining = max(0.0, end - time.monotonic())
            got = False
            try:
                self._on_iopub(self.kc.get_iopub_msg(timeout=min(remaining, 0.01) or 0.001))
                got = True
            except queue.Empty:
                pass
            try:
                msg = self.kc.get_shell_msg(timeout=0.001)
                self.replies[msg["parent_header"].get("msg_id", "")] = (time.monotonic(), msg)
                got = True
            except queue.Empty:
                pass
            if not got and time.monotonic() >= end:
                return

    def _on_iopub(self, msg: Msg) -> None:
        now = time.monotonic()
        kind, content = msg["msg_type"], msg["content"]
        parent = msg["parent_header"].get("msg_id", "")
        if kind == "status" and content.get("execution_state") == "idle":
            self.idle.add(parent)
        elif kind == "comm_open":
            comm = self.comms.setdefault(content["comm_id"], WidgetComm(content["comm_id"]))
            comm.state.update(content.get("data", {}).get("state", {}))
        elif kind == "comm_msg":
            comm = self.comms.setdefault(content["comm_id"], WidgetComm(content["comm_id"]))
            data = content.get("data", {})
            comm.bytes_in += len(str(data))
            if data.get("method") == "update":
                comm.state.update(data.get("state", {}))
                comm.updates.append((now, data.get("state", {})))
            elif data.get("method") == "custom":
                comm.custom.append((now, data.get("content", {})))
        elif kind in ("stream", "error", "display_data", "execute_result"):
            self.outputs.setdefault(parent, []).append(msg)
        elif kind == "update_display_data":
            self.display_updates.append(msg)

    def wait_until(self, predicate: Callable[[], bool], *, timeout: float = 30, what: str = "") -> float:
        """Pump until `predicate()` holds; return the monotonic time it did."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.01)
            if predicate():
                return time.monotonic()
        raise TimeoutError(f"timed out waiting for {what or predicate}; outputs: {self.outputs}")

    # ---- actions ---------------------------------------------------------------------------
    def execute(self, code: str, *, cell_id: str | None = None, subshell_id: str | None = None,
                headless: bool = False) -> str:
        """Send an execute_request (with a JupyterLab-style cellId, on a subshell if given); return its msg_id.

        `headless=True` sends it as nbclient does (papermill, `nbconvert --execute`): no cellId.
        """
        msg = self.kc.session.msg(
            "execute_request",
            {"code": code, "silent": False, "store_history": True, "user_expressions": {},
             "allow_stdin": False, "stop_on_error": True},
        )
        if not headless:
            msg["metadata"]["cellId"] = cell_id or str(uuid.uuid4())
        if subshell_id is not None:
            msg["header"]["subshell_id"] = subshell_id
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def run(self, code: str, *, timeout: float = 60, subshell_id: str | None = None, headless: bool = False) -> str:
        """Execute and wait for the reply; return the text of stdout / results; raise on error."""
        msg_id = (self.execute(code, subshell_id=subshell_id, headless=True) if headless
                  else self.execute(code, subshell_id=subshell_id))
        # The kernel publishes a request's outputs before its `idle` status, on the same iopub socket; the
        # shell reply may overtake them (ipykernel 6.29 under load), so a fixed wait after it is a race.
        self.wait_until(
            lambda: msg_id in self.replies and msg_id in self.idle, timeout=timeout, what=f"reply to {code!r}"
        )
        outs = self.outputs.get(msg_id, [])
        errors = [o for o in outs if o["msg_type"] == "error"]
        if errors:
            raise AssertionError("\n".join(errors[0]["content"]["traceback"]))
        texts = []
        for o in outs:
            if o["msg_type"] == "stream":
                texts.append(o["content"]["text"])
            elif o["msg_type"] == "execute_result":
                texts.append(o["content"]["data"].get("text/plain", ""))
        return "".join(texts)

    def create_subshell(self) -> str:
        """Ask for a kernel subshell (ipykernel >= 7) on the control channel; return its id."""
        self.kc.control_channel.send(self.kc.session.msg("create_subshell_request", {}))
        return str(self.kc.get_control_msg(timeout=10)["content"]["subshell_id"])

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> float:
        """Send what `model.send(content)` sends from the browser; return the send time."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        self.kc.shell_channel.send(msg)
        return time.monotonic()

    def agent_widgets(self) -> list[WidgetComm]:
        """Comms whose state looks like an agentcell widget (it has the `final` trait)."""
        return [c for c in self.comms.values() if "final" in c.state and "status" in c.state]

    def streamed_text(self, comm: WidgetComm) -> str:
        """All answer text that custom messages carried so far."""
        text = []
        for _, content in comm.custom:
            for ev in content.get("events", []):
                if ev.get("kind") == "token_delta":
                    text.append(ev["text"])
        return "".join(text)
