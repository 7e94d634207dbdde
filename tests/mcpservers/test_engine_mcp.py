"""An MCP server's tools in a run: the call reaches the real server and its result reaches the model; the
server's own hints decide approval; the server is shared across runs and stopped with no child left."""

from __future__ import annotations

import pytest

from agentcell.engine import complete_async, stream
from agentcell.events import ApprovalRequested, ToolCompleted
from agentcell.mcp_servers import mcp, registry
from tests.engine.conftest import Call, Script, conversation, slot, template

from .conftest import TIME_SERVER, children, fault

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers


async def test_a_time_server_tool_is_called_and_its_result_reaches_the_model() -> None:
    script = Script([Call("get_current_time", {"timezone": "UTC"}, id="t1")], ["it is now"])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model,
                                  toolsets=[mcp(TIME_SERVER)])
    assert result.status == "completed", result.error
    assert sorted(script.tools_per_request[0]) == ["convert_time", "get_current_time"]
    ((kind, name, text),) = conversation(script.requests[1].messages)[-1]
    assert (kind, name) == ("return", "get_current_time")
    assert text["timezone"] == "UTC" and text["datetime"].endswith("+00:00")


async def test_the_server_is_started_once_and_shared_by_later_runs() -> None:
    time = mcp(TIME_SERVER)
    for _ in range(2):
        script = Script([Call("get_current_time", {"timezone": "UTC"})], ["ok"])
        result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, toolsets=[time])
        assert result.status == "completed", result.error
    (live,) = registry.running()
    assert live.calls == 2 and live.state == "running"
    assert live.pid in children()
    await registry.stop("time")
    assert live.pid not in children() and registry.running() == []


async def test_read_only_hints_run_freely_and_a_write_waits_for_approval() -> None:
    asked: list[ApprovalRequested] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request)
        return False

    script = Script([Call("echo", {"text": "a"}, id="e1"), Call("write_note", {"text": "b"}, id="w1")], ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                      toolsets=[mcp(fault())], approve=approve, approve_writes=True)]
    assert [r.tool_name for r in asked] == ["write_note"]
    done = {e.tool_name: (e.ok, e.result) for e in events if isinstance(e, ToolCompleted)}
    assert done["echo"] == (True, "echo: a")
    assert "write_note" not in done  # denied before it started: never ran
    returns = dict((name, text) for _, name, text in conversation(script.requests[1].messages)[-1])
    assert returns["echo"] == "echo: a" and "denied" in returns["write_note"]


async def test_a_readonly_override_trusts_no_hint() -> None:
    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return True

    script = Script([Call("echo", {"text": "a"}), Call("write_note", {"text": "b"})], ["done"])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model,
                                  toolsets=[mcp(fault(), readonly=False)], approve=approve, approve_writes=True)
    assert result.status == "completed", result.error
    assert sorted(asked) == ["echo", "write_note"]


async def test_the_model_sees_which_server_a_tool_comes_from() -> None:
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[tuple[str, str | None, dict[str, object] | None]] = []

    async def look(messages: list[object], info: AgentInfo) -> object:
        seen.extend((t.name, t.description, t.metadata) for t in info.function_tools)
        yield "done"

    result = await complete_async(template(slot("answer", use_tools=True)),
                                  model=FunctionModel(stream_function=look), toolsets=[mcp(fault(), name="f")])
    assert result.status == "completed", result.error
    tools = {name: (description, metadata) for name, description, metadata in seen}
    assert tools["echo"][0] == "(MCP server f) Say `text` back."
    assert tools["echo"][1] is not None and tools["echo"][1]["mcp_server"] == "f" and tools["echo"][1]["readonly"]
    assert tools["write_note"][1] is not None and tools["write_note"][1]["readonly"] is False


async def test_two_servers_with_one_tool_name_are_both_offered_under_prefixed_names() -> None:
    from pydantic_ai.messages import ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

    seen: dict[str, str | None] = {}

    async def play(messages: list[object], info: AgentInfo) -> object:
        seen.update((t.name, t.description) for t in info.function_tools)
        returns = [p for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]
        if not returns:
            yield {0: DeltaToolCall(name="b_echo", json_args='{"text": "x"}', tool_call_id="c1")}
        else:
            yield f"{returns[0].tool_name} said {returns[0].content}"

    result = await complete_async(template(slot("answer", use_tools=True)), model=FunctionModel(stream_function=play),
                                  toolsets=[mcp(fault(), name="a"), mcp(fault(), name="b", env={"SECOND": "1"})])
    assert result.status == "completed", result.error
    assert result.answer == "b_echo said echo: x"
    assert {"a_echo", "b_echo", "a_write_note", "b_write_note"} <= set(seen) and "echo" not in seen
    assert seen["b_echo"] == "(MCP server b) Say `text` back. (tool echo of MCP server b)"
    assert len(registry.running()) == 2


async def test_a_tool_card_names_its_server_and_other_tools_name_none() -> None:
    from agentcell.events import ToolStarted
    from agentcell.events.json import wire_fields

    def local(x: str) -> str:
        """A notebook tool."""
        return x

    script = Script([Call("echo", {"text": "a"}), Call("local", {"x": "b"})], ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[local],
                                      toolsets=[mcp(fault(), name="f")])]
    started = {e.tool_name: e for e in events if isinstance(e, ToolStarted)}
    assert (started["echo"].server, started["local"].server) == ("f", None)
    assert wire_fields(started["echo"])[0]["server"] == "f"
    assert "server" not in wire_fields(started["local"])[0]  # the wire of every other tool is unchanged
