"""An MCP server reached over streamable HTTP on 127.0.0.1 (`--mcp http://…/mcp`): its tools join the run and its
hints decide approval as for a stdio server; a URL where nothing listens is one sentence."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from agentcell.engine import complete_async
from agentcell.errors import RunError
from agentcell.events import ApprovalRequested
from agentcell.mcp_servers import mcp
from tests.engine.conftest import Call, Script, slot, template

from .conftest import FAULT_SERVER

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(FAULT_SERVER), f"http:{port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60  # a hang guard while the server starts
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_an_http_server_tools_join_the_run_and_a_write_waits(http_server: str) -> None:
    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return True

    script = Script([Call("echo", {"text": "a"}), Call("write_note", {"text": "b"})], ["done"])
    async with asyncio.timeout(90):
        result = await complete_async(template(slot("answer", use_tools=True)), model=script.model,
                                      toolsets=[mcp(http_server, name="web")], approve=approve, approve_writes=True)
    assert result.status == "completed", result.error
    assert asked == ["write_note"]


async def test_a_url_where_nothing_listens_is_one_sentence() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    script = Script([Call("echo", {"text": "a"})], ["done"])
    with pytest.raises(RunError) as caught:
        async with asyncio.timeout(90):
            await complete_async(template(slot("answer", use_tools=True)), model=script.model,
                                 toolsets=[mcp(url, name="gone", start_timeout=5)])
    assert str(caught.value) == (f"McpServerError: the MCP server 'gone' (`{url}`) could not be reached: "
                                 "All connection attempts failed")
