"""An agent whose calls can never be deferred carries no capability (`engine/agents.py`, `_defers_nothing`).

pydantic-ai copies the run context for every capability on every hook it dispatches; the engine's one
capability (`_SlotTools`) is there to wrap the agent's toolsets and to resolve deferred (approval) calls. When
the toolsets are only MCP servers' (agentcell's or pydantic-ai's own `MCPToolset`), the slot has no tools of
its own and `approve_writes` is off, no call can be deferred: the agent takes the wrapper as its one toolset,
and every call still goes through the run's `SlotCalls`. Anything else keeps the capability, so approvals are
resolved as before.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.toolsets import FunctionToolset

import agentcell
from agentcell.engine.agents import SlotAgents, SlotToolset
from agentcell.mcp_servers.toolset import McpTools
from tests.tool_rounds import lookup, rounds_model

SERVER = f"{sys.executable} -m mcp_server_time"


def _added(agent: Agent[Any, Any]) -> int:
    bare = len(Agent(rounds_model(0))._root_capability.capabilities)  # pydantic-ai's own
    return len(agent._root_capability.capabilities) - bare


def _agent(**kwargs: Any) -> Agent[Any, Any]:
    return SlotAgents().agent_for(deps_type=type(None), name="x", retries=1, answers="text", **kwargs)


def test_an_agent_of_mcp_servers_only_carries_no_capability_and_wraps_them_as_its_one_toolset() -> None:
    server = agentcell.mcp(SERVER)  # nothing starts until a run asks for its tools
    agent = _agent(tools=(), toolsets=(server,))
    assert _added(agent) == 0
    wrappers = [t for t in agent.toolsets if isinstance(t, SlotToolset)]
    assert len(wrappers) == 1 and wrappers[0].wrapped is server


def test_pydantic_ais_own_mcp_toolset_needs_no_capability_either() -> None:
    pytest.importorskip("fastmcp")
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    toolset = MCPToolset(StdioTransport(sys.executable, ["-m", "mcp_server_time"]))
    assert _added(_agent(tools=(), toolsets=(toolset,))) == 0


class _Subclass(McpTools):
    """A subclass may ask for approval from inside its calls: not trusted by type."""


@pytest.mark.parametrize(
    "case",
    ["approve_writes", "own tool", "function toolset", "subclass"],
)
def test_an_agent_whose_calls_may_be_deferred_keeps_its_capability(case: str) -> None:
    server = agentcell.mcp(SERVER)
    kwargs: dict[str, Any] = {"tools": (), "toolsets": (server,)}
    if case == "approve_writes":
        kwargs["approve_writes"] = True
    elif case == "own tool":
        kwargs["tools"] = (Tool(lookup),)
    elif case == "function toolset":
        kwargs["toolsets"] = (server, FunctionToolset([lookup]))
    else:
        kwargs["toolsets"] = (_Subclass(server.spec),)
    assert _added(_agent(**kwargs)) == 1
