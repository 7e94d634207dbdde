"""A stepped run holds no provider connection while it is paused (the loopback OpenAI server sees none)."""

from __future__ import annotations

import asyncio

import pytest

import agentcell
from agentcell.events import ProcessingComplete, StepPaused
from tests.openai_server import Call, FakeOpenAI, Reply, Text

from .conftest import eventually, lookup_module

pytestmark = pytest.mark.anyio


async def _at_pause(handle: agentcell.RunHandle) -> None:
    async with asyncio.timeout(30):
        async for event in handle.run.events():
            paused = handle.paused
            if isinstance(event, ProcessingComplete) or (
                isinstance(event, StepPaused) and paused is not None and paused.number == event.number
            ):
                return


async def test_a_paused_run_holds_no_connection(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}, id="c1")),
        Reply(Text("Dr Ada Byron leads it.", pieces=3)),
    )
    handle = agentcell.start_run("Who leads PSYC605? [[answer|use_tools=true]]",
                                 model=f"openai-compat:fake-model@{server.base_url}", tools=[lookup_module],
                                 step=True, journal=False)
    await _at_pause(handle)
    assert handle.paused is not None and handle.paused.before == "request"
    assert server.chat_requests == [] and server.open_connections == 0
    await handle.step()  # request 1 goes out; the run pauses before the tool call
    assert handle.paused is not None and handle.paused.before == "tool"
    assert len(server.chat_requests) == 1
    await eventually(lambda: server.open_connections == 0)
    await handle.step()  # the tool runs; the run pauses before request 2
    assert handle.paused is not None and handle.paused.number == 3
    assert len(server.chat_requests) == 1 and server.open_connections == 0
    assert await handle.step() is None
    result = await handle
    assert result.status == "completed" and len(server.chat_requests) == 2
