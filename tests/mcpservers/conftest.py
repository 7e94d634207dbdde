"""MCP tests: a real stdio server per test (PyPI's `mcp-server-time` / `mcp-server-git`, or `fault_server.py`),
and a count of this process's child processes before and after, so a leaked server fails the test."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentcell.mcp_servers import registry

FAULT_SERVER = Path(__file__).with_name("fault_server.py")
TIME_SERVER = f"{sys.executable} -m mcp_server_time"


def fault(mode: str = "ok") -> str:
    return f"{sys.executable} {FAULT_SERVER} {mode}"


def children(pid: int | None = None) -> list[int]:
    """The live (not zombie) child processes of `pid` (this process by default), from /proc."""
    me = str(pid or os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.append(int(entry))
    return found


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def no_leftover_servers() -> AsyncIterator[None]:
    """Every server a test started is stopped after it, and no child process is left."""
    before = set(children())
    yield
    await registry.stop()
    assert set(children()) - before == set()
