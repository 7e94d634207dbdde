"""An MCP stdio server started from a real kernel (ipykernel 7.x and 6.29): no `fileno` error, the tool's result
reaches the model, and the server's process is gone after `%agent mcp stop` and after the kernel shuts down.

Under ipykernel `sys.stderr` is an `OutStream` without a file descriptor; a server started against it fails
with `UnsupportedOperation: fileno`. agentcell gives the server a file of its own instead.
"""

from __future__ import annotations

import os
import time

import pytest

from tests.kernel.conftest import kernel_available, open_session
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel

SCRIPTED = """
import json as _json
from pydantic_ai.messages import ToolReturnPart as _ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall as _DeltaToolCall, FunctionModel as _FunctionModel

async def _calls_time(messages, info):
    returns = [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, _ToolReturnPart)]
    if not returns:
        yield {0: _DeltaToolCall(name="get_current_time", json_args=_json.dumps({"timezone": "UTC"}))}
    else:
        yield "the server said " + _json.dumps(returns[-1].content, sort_keys=True)

calls_time = _FunctionModel(stream_function=_calls_time, model_name="calls-time")
"""

CELL = '%%agent --wait -o run -m calls_time --mcp "python -m mcp_server_time"\nWhat time is it in UTC? [[answer|use_tools=true]]'


def gone(pid: int) -> bool:
    """No such process, or a zombie its parent has not reaped yet (it is no longer running)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pid: int, timeout: float = 30) -> bool:
    """Poll until `pid` is gone (a hang guard, not a timing under test)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


def require_mcp(kernel: KernelSession) -> None:
    if kernel.run("import importlib.util as _u; print(_u.find_spec('mcp_server_time') is not None)").strip() != "True":
        pytest.skip("this kernel's venv has no mcp-server-time (scripts/setup installs it)")


def run_time_cell(kernel: KernelSession) -> int:
    kernel.run(SCRIPTED)
    out = kernel.run(CELL, timeout=180)
    assert "fileno" not in out
    answer = kernel.run("print(run.status); print(run.answer)")
    status, text = answer.split("\n", 1)
    assert status == "completed", answer
    assert text.startswith("the server said {") and '"timezone": "UTC"' in text
    return int(kernel.run("from agentcell.mcp_servers import registry as _r; print(_r.running()[0].pid)").strip())


def test_a_time_server_runs_in_the_kernel_and_mcp_stop_ends_it(kernel: KernelSession) -> None:
    require_mcp(kernel)
    pid = run_time_cell(kernel)
    assert not gone(pid)
    listed = kernel.run("print(_r.running()[0].state, [t.name for t in _r.running()[0].tools])")
    assert listed.startswith("running") and "get_current_time" in listed
    # A second cell reuses the server: no new process.
    kernel.run(CELL, timeout=180)
    assert int(kernel.run("print(_r.running()[0].pid)").strip()) == pid
    assert "Stopped MCP server(s): time." in kernel.run("%agent mcp stop")
    assert gone(pid) or wait_gone(pid, timeout=5)  # ended before the command returned (reaped just after)
    assert kernel.run("print(len(_r.running()))").strip() == "0"


@pytest.mark.parametrize("kernel_name", ["python3", "agentcell-k6"])
@pytest.mark.parametrize("how", ["shutdown", "restart", "kill"])
def test_no_server_outlives_its_kernel(kernel_name: str, how: str) -> None:
    if not kernel_available(kernel_name):
        pytest.skip(f"kernel {kernel_name!r} is not installed here (scripts/setup creates it)")
    session = open_session(kernel_name)
    try:
        require_mcp(session)
        pid = run_time_cell(session)
        if how == "shutdown":
            session.km.shutdown_kernel(now=False)
        elif how == "restart":
            session.km.restart_kernel(now=False)
        else:  # SIGKILL: no atexit; the server sees its stdin close and exits by itself
            session.km.shutdown_kernel(now=True)
        assert wait_gone(pid), f"the MCP server (pid {pid}) outlived its kernel ({how})"
    finally:
        session.close()
    assert os.getpid()  # the test process itself is untouched
