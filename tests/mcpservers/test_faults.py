"""Every way an MCP server goes wrong is one clear sentence naming the server's command and its stderr's last
lines; the run keeps what it had, other tools keep working, and no child process is left."""

from __future__ import annotations

import asyncio
import sys

import pytest

from agentcell.engine import complete_async, stream
from agentcell.errors import McpServerError, RunError
from agentcell.events import ToolCompleted
from agentcell.mcp_servers import mcp, registry
from tests.engine.conftest import Call, Script, slot, template

from .conftest import fault

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers

GUARD_S = 90
"""A hang guard around each run, not a timing under test."""


async def failed_run(server: str, **kwargs: object) -> str:
    script = Script([Call("echo", {"text": "a"})], ["done"])
    async with asyncio.timeout(GUARD_S):
        with pytest.raises(RunError) as caught:
            await complete_async(template(slot("answer", use_tools=True)), model=script.model,
                                 toolsets=[mcp(server, **kwargs)])  # type: ignore[arg-type]
    assert caught.value.result.status == "failed"
    return str(caught.value)


async def test_a_command_that_does_not_exist() -> None:
    error = await failed_run("no-such-mcp-server-here --flag")
    assert error == ("McpServerError: the MCP server 'no_such_mcp_server_here' (`no-such-mcp-server-here --flag`) "
                     "could not be started: no such command (no-such-mcp-server-here) (its stderr was empty)")


async def test_a_server_that_exits_at_once_is_named_with_its_stderr() -> None:
    error = await failed_run(fault("exit"), name="db")
    assert "the MCP server 'db' (`" in error and "exited before it finished the MCP handshake" in error
    assert error.endswith("its stderr ended with: fault_server: cannot open the database /nonexistent/db.sqlite")


async def test_a_server_that_hangs_in_initialise_is_bounded() -> None:
    error = await failed_run(fault("hang"), name="stuck", start_timeout=1)
    assert "the MCP server 'stuck'" in error and "handshake" in error
    assert error.endswith("its stderr ended with: fault_server: waiting forever")


async def test_a_server_that_writes_garbage_to_stdout() -> None:
    error = await failed_run(fault("garbage"), name="noisy", start_timeout=2)
    assert "the MCP server 'noisy'" in error
    assert "wrote something that is not MCP to stdout" in error


async def test_a_server_that_dies_mid_call_leaves_the_run_and_other_tools_working() -> None:
    def local(x: str) -> str:
        """A notebook tool beside the server."""
        return f"local {x}"

    script = Script([Call("crash", {"text": "a"})], [Call("local", {"x": "b"})], ["done"])
    async with asyncio.timeout(GUARD_S):
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          tools=[local], toolsets=[mcp(fault(), name="crashy")])]
    assert events[-1].status == "completed"
    done = [(e.tool_name, e.ok, e.result) for e in events if isinstance(e, ToolCompleted)]
    (crash, after) = done
    assert crash[:2] == ("crash", False)
    assert crash[2].startswith("the MCP server 'crashy' (`") and "stopped answering during the call of 'crash'" in crash[2]
    assert crash[2].endswith("fault_server: crashing now")
    assert after == ("local", True, "local b")
    # The crashed server was dropped; the next request's tool list started a fresh one.
    assert [live.state for live in registry.running()] == ["running"]


async def test_a_tool_that_raises_is_an_error_the_model_reads() -> None:
    script = Script([Call("boom", {"text": "a"})], [Call("echo", {"text": "b"})], ["done"])
    async with asyncio.timeout(GUARD_S):
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[mcp(fault(), name="f")])]
    done = [(e.tool_name, e.ok, e.result) for e in events if isinstance(e, ToolCompleted)]
    assert done[0][:2] == ("boom", False)
    assert done[0][2].startswith("the MCP tool 'boom' of server 'f' failed: ") and "boom on 'a'" in done[0][2]
    assert done[1] == ("echo", True, "echo: b")


async def test_a_5_mb_result_is_clipped_for_the_model_and_the_view() -> None:
    script = Script([Call("big", {"text": "a"})], ["done"])
    async with asyncio.timeout(GUARD_S):
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[mcp(fault(), name="f")])]
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert done.ok and done.result.startswith("xxxx") and len(done.result) < 101_000
    assert "5,242,880" in done.result  # the clip note names the full size


async def test_a_bad_source_is_refused_before_anything_starts() -> None:
    with pytest.raises(McpServerError, match="an MCP server is a command line or an http"):
        mcp("   ")
    with pytest.raises(McpServerError, match="cannot read the MCP server command"):
        mcp('python -m "unclosed')


async def test_the_spec_pickles_so_a_dask_worker_can_start_its_own() -> None:
    import pickle

    tools = mcp(f"{sys.executable} -m mcp_server_time", readonly=True, tools=["get_*"])
    copy = pickle.loads(pickle.dumps(tools))
    assert copy.spec == tools.spec and copy.only == ("get_*",)


async def test_stop_cancels_an_mcp_call_at_once_and_the_server_stays_for_the_next_run() -> None:
    from agentcell.engine import start_run
    from agentcell.events import ToolStarted

    server = mcp(fault(), name="f")
    script = Script([Call("slow", {"text": "a"})], ["never"])
    run = start_run(template(slot("answer", use_tools=True)), model=script.model, toolsets=[server])
    async with asyncio.timeout(GUARD_S):
        async for event in run.events():
            if isinstance(event, ToolStarted):
                break
        run.cancel()
        result = await run.wait()  # a ten-minute call: a stop that waited for it would trip the guard
    assert result.status == "stopped"
    (live,) = registry.running()
    assert live.state == "running"  # Stop ended the call, not the server
    again = Script([Call("echo", {"text": "b"})], ["ok"])
    async with asyncio.timeout(GUARD_S):
        after = await complete_async(template(slot("answer", use_tools=True)), model=again.model, toolsets=[server])
    assert after.status == "completed" and registry.running() == [live]


async def test_an_image_result_is_shown_as_an_image_not_as_base64_json() -> None:
    script = Script([Call("picture", {"text": "a"})], ["done"])
    async with asyncio.timeout(GUARD_S):
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[mcp(fault(), name="f")])]
    (done,) = [e for e in events if isinstance(e, ToolCompleted)]
    assert (done.ok, done.result) == (True, "[image: a 1×1 PNG]")
