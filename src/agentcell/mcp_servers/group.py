"""Two MCP servers with a tool of the same name: both offered, the clashing names prefixed by their server's.

pydantic-ai refuses two toolsets that offer one name (it suggests `.prefixed(...)`, which would rename every
tool of the server, clashing or not). A run's MCP servers are gathered into one `McpGroup` instead
(`grouped`, called where the run's toolsets are set up): a tool whose name only one server offers keeps it;
one offered by several becomes `SERVER_TOOL` for each, and its description ends with the mapping
(`(tool status of MCP server git)`), which the model reads. Calls are
routed back to the member under the tool's own name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from .toolset import McpTools


def grouped(toolsets: Sequence[Any]) -> tuple[Any, ...]:
    """`toolsets` with its `McpTools` gathered into one `McpGroup` when there are two or more."""
    servers = [t for t in toolsets if isinstance(t, McpTools)]
    if len(servers) < 2:
        return tuple(toolsets)
    return (*(t for t in toolsets if not isinstance(t, McpTools)), McpGroup(servers))


class McpGroup(AbstractToolset[Any]):
    """Several MCP servers as one toolset, clashing tool names prefixed by the server's name."""

    def __init__(self, members: Sequence[McpTools]) -> None:
        self.members = tuple(members)
        self._routes: dict[str, tuple[McpTools, str]] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return (McpGroup, (self.members,))

    def __repr__(self) -> str:
        return f"McpGroup({', '.join(repr(m) for m in self.members)})"

    @property
    def id(self) -> str | None:
        return "mcp:" + "+".join(m.spec.name for m in self.members)

    async def __aenter__(self) -> McpGroup:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        per_member = [(member, await member.get_tools(ctx)) for member in self.members]
        counts = Counter(name for _, tools in per_member for name in tools)
        offered: dict[str, ToolsetTool[Any]] = {}
        routes: dict[str, tuple[McpTools, str]] = {}
        for member, tools in per_member:
            for name, tool in tools.items():
                shown, tool_def = name, tool.tool_def
                if counts[name] > 1:
                    shown = f"{member.spec.name}_{name}"
                    mapping = f"(tool {name} of MCP server {member.spec.name})"
                    described = f"{tool_def.description or ''} {mapping}".strip()
                    tool_def = replace(tool_def, name=shown, description=described)
                offered[shown] = replace(tool, toolset=self, tool_def=tool_def)
                routes[shown] = (member, name)
        self._routes = routes
        return offered

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        member, original = self._routes[name]
        own = replace(tool, toolset=member, tool_def=replace(tool.tool_def, name=original))
        return await member.call_tool(original, tool_args, ctx, own)
