"""The cell's MCP flags, read without starting anything: `--mcp`, `--mcp-readonly`, `--toolsets`,
`--tools NAME:PATTERN`, the names servers get, and how `%agent tools` shows a server's tool."""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError
from pydantic_ai.toolsets import FunctionToolset

from agentcell.frontends.jupyter.mcp_cell import cell_toolsets
from agentcell.frontends.jupyter.tool_table import ToolTable
from agentcell.mcp_servers import McpTools, mcp
from agentcell.mcp_servers.spec import default_name


def args(**given: Any) -> SimpleNamespace:
    return SimpleNamespace(**{"mcp": [], "mcp_readonly": [], "toolsets": [], "tools": None, **given})


def test_names_come_from_the_command_or_the_url() -> None:
    assert default_name(("python", "-m", "mcp_server_time")) == "time"
    assert default_name(("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")) == "filesystem"
    assert default_name(("uvx", "mcp-server-git", "--repository", ".")) == "git"
    assert default_name(("./shelf_server.py",)) == "shelf"
    assert mcp("http://127.0.0.1:8765/mcp").spec.name == "http_127_0_0_1_8765"
    assert mcp("python -m mcp_server_time").spec.command[0] == sys.executable


def test_mcp_flags_make_servers_and_tools_selects_theirs() -> None:
    toolsets, tools = cell_toolsets(args(mcp=['"python -m mcp_server_time"', "python -m mcp_server_git"],
                                         mcp_readonly=["git"], tools=["time:get_*", "lookup"]), {})
    assert [(t.spec.name, t.spec.readonly, t.only) for t in toolsets] == [("time", None, ("get_*",))]
    assert tools == ["lookup"]
    toolsets, tools = cell_toolsets(args(mcp=["python -m mcp_server_git"], mcp_readonly=["git"]), {})
    assert [(t.spec.name, t.spec.readonly, t.only) for t in toolsets] == [("git", True, None)]
    assert tools is None


def test_toolsets_takes_a_variable_holding_one_or_a_list() -> None:
    git = mcp("python -m mcp_server_git")
    plain = FunctionToolset([])
    toolsets, _ = cell_toolsets(args(toolsets=["both", "one"]), {"both": [git, plain], "one": plain})
    assert toolsets[0] is git and toolsets[1:] == [plain, plain]
    assert isinstance(toolsets[0], McpTools)


@pytest.mark.parametrize(("given", "message"), [
    ({"mcp_readonly": ["nope"]}, "--mcp-readonly nope: this cell has no MCP server named 'nope' (its servers: none)"),
    ({"tools": ["git:git_status"]}, "--tools git:git_status: this cell has no MCP server named 'git' (its servers: "
                                    "none; add one with --mcp)"),
    ({"toolsets": ["missing"]}, "--toolsets missing: no notebook variable is called 'missing'"),
    ({"toolsets": ["number"]}, "--toolsets number: it holds a int, not a pydantic-ai toolset (agentcell.mcp(...), "
                               "pydantic_ai.mcp.MCPToolset, FunctionToolset) or a list of them"),
])
def test_a_wrong_flag_is_one_sentence(given: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        cell_toolsets(args(**given), {"number": 3})
    assert str(caught.value) == message


def test_agent_tools_names_the_server_and_its_hints() -> None:
    table = ToolTable({"get_current_time": {
        "description": "Get the time.", "parameters": {"type": "object", "properties": {"timezone": {"type": "string"}},
                                                       "required": ["timezone"]},
        "readonly": True, "approve": False, "server": "time", "hints": {"readOnlyHint": True, "title": "x"},
    }})
    assert table.text().splitlines()[0] == "time: get_current_time(timezone: string)   [readonly (readOnlyHint=True)]"
