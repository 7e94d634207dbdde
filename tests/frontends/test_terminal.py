"""Terminal IPython: `%%agent` runs in the cell, prints a live transcript, and Ctrl-C stops it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

IPYTHON = Path(sys.executable).with_name("ipython")
CODE = (
    "get_ipython().run_line_magic('load_ext', 'agentcell')\n"
    "get_ipython().run_cell_magic('agent', '-o r', 'Explain photosynthesis in detail.\\n[[answer]]')\n"
    "print('STATUS', r.status, '|', len(r.partial.get('answer', '').split()), 'words')\n"
)


def _controlling_tty() -> None:
    """Make the pty the child's controlling terminal, so a typed Ctrl-C becomes SIGINT as in a real shell."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    out, deadline = b"", time.monotonic() + timeout
    while needle not in out and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                out += os.read(fd, 4096)
            except OSError:
                break
    return out


@pytest.mark.slow  # terminal IPython in a pty
def test_terminal_prints_live_and_ctrl_c_stops_keeping_the_partial_answer() -> None:
    assert IPYTHON.exists() or shutil.which("ipython")
    master, slave = pty.openpty()
    env = {**os.environ, "AGENTCELL_MODEL": "offline", "TERM": "dumb"}
    proc = subprocess.Popen([str(IPYTHON), "--simple-prompt", "--no-banner", "-c", CODE],
                            stdin=slave, stdout=slave, stderr=slave, env=env, preexec_fn=_controlling_tty)
    os.close(slave)
    try:
        seen = read_until(master, b"It read your prompt", timeout=60)
        assert b"offline default model" in seen  # the header line printed before the answer
        assert b"answer (text)" in seen
        # The answer is arriving word by word: Ctrl-C now (the pty turns \x03 into SIGINT).
        os.write(master, b"\x03")
        rest = read_until(master, b"STATUS", timeout=20)
        rest += read_until(master, b"\n", timeout=5)
        text = (seen + rest).decode(errors="replace")
        assert "── stopped" in text
        assert "STATUS stopped | " in text
        words = int(text.split("STATUS stopped | ")[1].split()[0])
        assert words >= 10  # the partial answer was kept (it had reached "It read your prompt")
        assert "inspect the run handle" not in text  # the end of the canned answer never arrived
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        os.close(master)


def test_terminal_lines_name_the_mcp_server_of_a_tool() -> None:
    """The terminal's tool and approval lines named only the tool; an MCP tool's line now names its server too,
    as every other view does, and a notebook tool's line is as it was."""
    import io

    from agentcell.events import ApprovalRequested, ToolStarted
    from agentcell.frontends.terminal import Printer

    out = io.StringIO()
    printer = Printer(out, color=False)
    printer(ToolStarted(run_id="r", slot="a", call_id="1", tool_name="git_commit", args={"message": "m"}, server="git"))
    printer(ApprovalRequested(run_id="r", slot="a", call_id="1", tool_name="git_commit", server="git"))
    printer(ToolStarted(run_id="r", slot="a", call_id="2", tool_name="lookup", args={}))
    assert out.getvalue().splitlines() == [
        '→ git_commit({"message": "m"}) via MCP server git',
        "approval needed for git_commit (MCP server git); terminal runs deny it",
        "→ lookup({})",
    ]
