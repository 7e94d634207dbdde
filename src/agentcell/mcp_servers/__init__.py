"""MCP servers as tool sources: `mcp(...)` builds one, the registry keeps the running ones, one per spec.

`mcp("python -m mcp_server_time")` (or `%%agent --mcp "…"`) is a pydantic-ai toolset for `toolsets=`; the
server starts when a run first asks for its tools and is reused by every later run in the process until
`stop()` (`%agent mcp stop`), an error, or interpreter exit. See docs/mcp.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from . import registry
from .spec import ServerSpec, parse_spec
from .toolset import SERVER_KEY, McpTools, readonly_of

__all__ = ["SERVER_KEY", "McpTools", "ServerSpec", "mcp", "parse_spec", "readonly_of", "registry"]


def mcp(
    source: str,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    readonly: bool | None = None,
    tools: Sequence[str] | None = None,
    start_timeout: float | None = None,
) -> McpTools:
    """An MCP server's tools, for `toolsets=[...]` (a stdio command line, or an `http(s)://…/mcp` URL).

    Args:
        source: `"python -m mcp_server_time"`, `"npx -y @scope/server"`, or `"http://127.0.0.1:8000/mcp"`.
        name: How views and `--tools NAME:*` name it; default from the command (`time`) or the URL's host.
        env: Extra environment variables for a stdio server.
        cwd: The stdio server's working directory.
        readonly: `True`/`False` overrides the server's own `readOnlyHint`s for all its tools (for servers
            whose hints are wrong); `None` trusts them.
        tools: Keep only the tools matching these names or patterns (`["git_status", "git_log*"]`).
        start_timeout: Seconds the server may take to start and answer `initialize` (default 30).

    Raises:
        McpServerError: the source cannot be read (nothing is started here: the server starts on first use).
    """
    spec = parse_spec(source, name=name, env=env, cwd=cwd, readonly=readonly, start_timeout=start_timeout)
    return McpTools(spec, only=tools)
