"""MCP servers in a cell: the `--mcp`, `--mcp-readonly` and `--toolsets` flags, `--tools NAME:*`, and `%agent mcp`.

Light at import (`magics.py` imports it at `%load_ext` time): the flags are IPython argument decorators,
and everything MCP is imported when a cell or command uses it.

* `--mcp "COMMAND ARGS…"` / `--mcp http://127.0.0.1:PORT/mcp` (repeatable): a server for this cell, started
  on first use and shared with every later cell that names the same command, environment and folder.
* `--mcp-readonly NAME` (repeatable): treat every tool of server `NAME` as read-only, whatever its hints say.
* `--toolsets NAME` (repeatable): a notebook variable holding a pydantic-ai toolset (an `agentcell.mcp(...)`,
  a `pydantic_ai.mcp.MCPToolset`, a `FunctionToolset`) or a list of them.
* `--tools time:* git:git_status`: an item with a colon selects tools of the MCP server before it.
* `%agent mcp` lists the servers this kernel has running (state, process, tools and their hints);
  `%agent mcp stop [NAME]` ends them (all, or those named `NAME`) before it returns.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic_arguments import argument

F = TypeVar("F", bound=Callable[..., Any])

_ARGUMENTS = (
    argument("--mcp", dest="mcp", action="append", default=[], metavar="SERVER",
             help='An MCP server\'s tools for this cell: "COMMAND ARGS…" (stdio) or http://HOST:PORT/mcp '
                  "(repeatable; started once, reused by later cells)."),
    argument("--mcp-readonly", dest="mcp_readonly", action="append", default=[], metavar="NAME",
             help="Treat every tool of MCP server NAME as read-only (no approval), whatever its hints say."),
    argument("--toolsets", dest="toolsets", action="append", default=[], metavar="NAME",
             help="A notebook variable holding a pydantic-ai toolset (agentcell.mcp(...), MCPToolset, ...) or a "
                  "list of them (repeatable)."),
)


def mcp_arguments(fn: F) -> F:
    """Add the MCP flags to a magic (one decorator for all of them)."""
    for add in reversed(_ARGUMENTS):
        fn = add(fn)
    return fn


def cell_toolsets(args: Any, user_ns: Mapping[str, Any]) -> tuple[list[Any], list[str] | None]:
    """The toolsets a cell's `--mcp`, `--toolsets` and `--tools NAME:PATTERN` ask for, and the `--tools` names
    left for the notebook's own tools (`None` when `--tools` was not given, or gave only server selections)."""
    servers: list[Any] = []
    if args.mcp or args.mcp_readonly or any(":" in name for name in args.tools or ()):
        from ...mcp_servers import mcp

        servers = [mcp(_unquoted(source)) for source in args.mcp]
    others: list[Any] = []
    for name in args.toolsets:
        others.extend(_named_toolsets(name, user_ns))
    servers += [t for t in others if _is_mcp(t)]
    others = [t for t in others if not _is_mcp(t)]
    names = {t.spec.name for t in servers}
    for name in args.mcp_readonly:
        if name not in names:
            raise UsageError(f"--mcp-readonly {name}: this cell has no MCP server named {name!r} "
                             f"(its servers: {', '.join(sorted(names)) or 'none'})")
    servers = [replace_spec(t, readonly=True) if t.spec.name in args.mcp_readonly else t for t in servers]
    tools = args.tools
    if tools:
        selections: dict[str, list[str]] = {}
        for item in tools:
            server, colon, pattern = item.partition(":")
            if colon:
                if server not in names:
                    raise UsageError(f"--tools {item}: this cell has no MCP server named {server!r} "
                                     f"(its servers: {', '.join(sorted(names)) or 'none'}; add one with --mcp)")
                selections.setdefault(server, []).append(pattern or "*")
        if selections:
            servers = [t.selected(selections[t.spec.name]) for t in servers if t.spec.name in selections]
            tools = [item for item in tools if ":" not in item] or None
    return [*servers, *others], tools


def replace_spec(tools: Any, **changes: Any) -> Any:
    from ...mcp_servers import McpTools

    return McpTools(replace(tools.spec, **changes), only=tools.only, tape=tools.tape)


def taped(toolsets: list[Any], *, record: str | None, replay: str | None) -> list[Any]:
    """`--record FILE` / `--replay FILE`: the cell's MCP servers record their tools and calls on `FILE.mcp.json`,
    or answer from it without starting (a cassette holds the model's side only)."""
    if not (record or replay) or not any(_is_mcp(t) for t in toolsets):
        return toolsets
    from ...mcp_servers.tape import Tape

    tape = Tape.replaying(replay) if replay else Tape.recording(record or "")
    return [t.taped(tape) if _is_mcp(t) else t for t in toolsets]


def _is_mcp(value: Any) -> bool:
    from ...mcp_servers import McpTools

    return isinstance(value, McpTools)


def _named_toolsets(name: str, user_ns: Mapping[str, Any]) -> list[Any]:
    from pydantic_ai.toolsets import AbstractToolset

    if name not in user_ns:
        raise UsageError(f"--toolsets {name}: no notebook variable is called {name!r}")
    value = user_ns[name]
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if not isinstance(item, AbstractToolset):
            raise UsageError(f"--toolsets {name}: it holds a {type(item).__name__}, not a pydantic-ai toolset "
                             "(agentcell.mcp(...), pydantic_ai.mcp.MCPToolset, FunctionToolset) or a list of them")
    return items


def _unquoted(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


# ---- %agent mcp ---------------------------------------------------------------------------------------


class ServerTable(list[dict[str, Any]]):
    """What `%agent mcp` returns: one dict per server (name, state, pid, command, tools with their hints)."""

    def _repr_html_(self) -> str:
        if not self:
            return "<p>No MCP server is running in this kernel.</p>"
        rows = []
        for server in self:
            tools = "<br>".join(
                f"<code>{html.escape(t['signature'])}</code> {html.escape(t['policy'])}" for t in server["tools"]
            )
            rows.append(
                f"<tr><td><b>{html.escape(server['name'])}</b></td><td>{html.escape(server['state'])}</td>"
                f"<td><code>{html.escape(server['command'])}</code><br>pid {server['pid']}, "
                f"{server['calls']} call(s)</td><td>{tools}</td></tr>"
            )
        head = "<tr><th>server</th><th>state</th><th>process</th><th>tools</th></tr>"
        return f'<table class="agentcell-mcp">{head}{"".join(rows)}</table>'

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text())

    def text(self) -> str:
        if not self:
            return "No MCP server is running in this kernel."
        blocks = []
        for server in self:
            head = (f"{server['name']}  [{server['state']}]  pid {server['pid']}  {server['calls']} call(s)\n"
                    f"    {server['command']}")
            if server["error"]:
                head += f"\n    {server['error']}"
            tools = "\n".join(f"    {t['signature']}  [{t['policy']}]" for t in server["tools"])
            blocks.append(f"{head}\n{tools}" if tools else head)
        return "\n\n".join(blocks)


def server_table() -> ServerTable:
    from ...mcp_servers import readonly_of, registry
    from .tool_table import signature

    table = ServerTable()
    for live in registry.running():
        tools = []
        for tool in live.tools:
            hints = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
            readonly = readonly_of(hints, live.spec.readonly)
            shown = ", ".join(f"{k}={v}" for k, v in hints.items() if k.endswith("Hint")) or "no hints"
            tools.append({
                "name": tool.name,
                "signature": signature(tool.name, dict(_input_schema(tool))),
                "policy": f"{'readonly' if readonly else 'write'} ({shown})",
                "readonly": readonly,
                "hints": hints,
                "description": tool.description or "",
            })
        table.append({
            "name": live.spec.name, "state": live.state, "pid": live.pid, "command": live.spec.shown,
            "calls": live.calls, "start_s": live.start_s, "error": live.error, "tools": tools,
        })
    return table


def _input_schema(tool: Any) -> Any:
    """The tool's argument schema (`input_schema` in MCP SDK 2, `inputSchema` before)."""
    return getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None) or {}


def mcp_tool_entries() -> dict[str, dict[str, Any]]:
    """`%agent tools` rows for the running MCP servers' tools: the description and schema, the server, its hints
    and the policy read from them."""
    from ...mcp_servers import readonly_of, registry

    rows: dict[str, dict[str, Any]] = {}
    for live in registry.running():
        for tool in live.tools:
            hints = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
            readonly = readonly_of(hints, live.spec.readonly)
            rows[tool.name] = {
                "description": tool.description or "", "parameters": dict(_input_schema(tool)),
                "readonly": readonly, "approve": False, "server": live.spec.name, "hints": hints,
            }
    return rows


def stop_servers(rest: Sequence[str]) -> list[str]:
    """`%agent mcp stop [NAME]`: end the processes now (gone when the command returns); each server's task
    tidies up on its loop afterwards."""
    from ...mcp_servers import registry

    if len(rest) > 1:
        raise UsageError("usage: %agent mcp stop [NAME]")
    name = rest[0] if rest else None
    if name is not None and not registry.find(name):
        names = ", ".join(sorted({live.spec.name for live in registry.running()})) or "none"
        raise UsageError(f"no MCP server is named {name!r}; running: {names}")
    return [live.spec.name for live in registry.detach(name)]


class McpCommands:
    """`%agent mcp [stop [NAME]]` (mixed into `AgentMagics`)."""

    def _cmd_mcp(self, rest: list[str]) -> Any:
        if not rest:
            return server_table()
        if rest[0] == "stop":
            stopped = stop_servers(rest[1:])
            return f"Stopped MCP server(s): {', '.join(stopped)}." if stopped else "No MCP server was running."
        raise UsageError("usage: %agent mcp | %agent mcp stop [NAME]")
