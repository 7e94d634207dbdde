"""Ending a server never reaps a process that is not ours to reap.

Before: `kill_now()` polled with `os.waitpid(pid, WNOHANG)` and so reaped the exited server itself. The process
belongs to the stdio client's asyncio subprocess, whose child watcher was waiting for it: the watcher then logged
"Unknown child process pid …, will report returncode 255" to stderr, an extra output under `%agent mcp stop` now
and then (a flaky browser test found it). Now an exited, unreaped leader (a zombie) counts as gone and is left to
its owner, who reads its real exit status.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentcell.mcp_servers import live
from agentcell.mcp_servers.spec import parse_spec

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


def _wait_until_zombie(pid: int) -> None:
    deadline = time.monotonic() + 30
    while not live._zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    if not live._zombie(pid):
        raise TimeoutError("the child never exited")


def test_an_exited_leader_counts_as_gone_and_its_owner_still_reads_its_status() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], start_new_session=True)
    _wait_until_zombie(child.pid)
    assert not live._alive(child.pid)
    assert child.wait(timeout=30) == 3  # not reaped by us: the owner gets the real status, not a made-up 0


@pytest.mark.anyio
async def test_kill_now_ends_the_group_and_leaves_the_reaping_to_the_owner() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    server = live.LiveServer(parse_spec(f"{sys.executable} -c pass"), asyncio.get_running_loop())
    server.pid = child.pid  # as `start()` finds it: our child, leader of its own process group
    server.kill_now()
    assert child.wait(timeout=30) == -signal.SIGTERM  # ended by SIGTERM, its status still there for its owner
