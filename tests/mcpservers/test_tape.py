"""`--record` / `--replay` with MCP tools: the recorded run's tool list and results are on the tape beside the
cassette, and the replay answers from them without starting any server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcell.engine import complete_async
from agentcell.errors import McpServerError
from agentcell.mcp_servers import mcp, registry
from agentcell.mcp_servers.tape import Tape, tape_path
from agentcell.providers import replay
from agentcell.providers.models import record
from tests.engine.conftest import Call, Script, conversation, slot, template

from .conftest import children, fault

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers


async def test_a_recorded_run_replays_without_starting_the_server(tmp_path: Path) -> None:
    cassette = tmp_path / "run.json"
    server = mcp(fault(), name="f")
    script = Script([Call("echo", {"text": "a"}, id="e1")], ["it said echo: a"])
    recorded = await complete_async(template(slot("answer", use_tools=True)), model=record(cassette, script.model),
                                    toolsets=[server.taped(Tape.recording(cassette))])
    assert recorded.status == "completed", recorded.error
    tape = json.loads(tape_path(cassette).read_text())
    assert tape["servers"]["f"]["calls"] == [{"tool": "echo", "args": {"text": "a"}, "result": "echo: a"}]
    assert {t["name"] for t in tape["servers"]["f"]["tools"]} >= {"echo", "write_note"}
    await registry.stop()
    before = children()

    replayed = await complete_async(template(slot("answer", use_tools=True)), model=replay(cassette, delay=0),
                                    toolsets=[server.taped(Tape.replaying(cassette))])
    assert replayed.status == "completed", replayed.error
    assert replayed.answer == "it said echo: a"
    assert registry.running() == [] and children() == before  # no server was started
    assert conversation(replayed.messages)[2] == [("return", "echo", "echo: a")]


async def test_a_replay_without_a_tape_says_so(tmp_path: Path) -> None:
    with pytest.raises(McpServerError, match=r"--replay has no MCP tape at .*run\.json\.mcp\.json"):
        Tape.replaying(tmp_path / "run.json")
