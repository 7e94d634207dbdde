"""What an MCP server is, as a plain value: the command (or URL) that reaches it, and how its tools are judged.

A `ServerSpec` is all a process needs to start the server itself: it pickles (a Dask worker starts its own
from it), compares by value (the kernel keeps one server per spec and reuses it across runs) and names the
server for every view (`%agent mcp`, the tool cards, error sentences). Parsing is here too, so a cell's
`--mcp "python -m mcp_server_time"` and `agentcell.mcp("python -m mcp_server_time")` make the same spec.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from ..errors import McpServerError

DEFAULT_START_TIMEOUT = 30.0
"""Seconds a server may take to start and answer `initialize` (a first `python -m` import on a busy machine
takes a few) before it counts as hung."""

_PREFIXES = ("mcp_server_", "mcp-server-", "server_", "server-")
_SUFFIXES = ("_mcp_server", "-mcp-server", "_server", "-server", "_mcp", "-mcp", ".py")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """One MCP server: stdio (a command) or HTTP (a URL), its name, and the policy override for its tools."""

    name: str
    """How the server is named in views, in `--tools NAME:*` and as the prefix of clashing tool names."""
    transport: Literal["stdio", "http"]
    command: tuple[str, ...] = ()
    """The stdio server's argv (the first item is resolved like a shell would; `python` is this interpreter)."""
    url: str | None = None
    """The HTTP server's endpoint (streamable HTTP; a URL ending in `/sse` is SSE)."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment variables for the stdio server (sorted, so two equal specs compare equal)."""
    cwd: str | None = None
    readonly: bool | None = None
    """`True`/`False` override every tool's read-only hint; `None` trusts the server's annotations."""
    start_timeout: float = DEFAULT_START_TIMEOUT
    kind: Literal["mcp_server"] = "mcp_server"

    @property
    def key(self) -> tuple[object, ...]:
        """What makes two specs the same running server (the name and policy do not: they are views of it)."""
        return (self.transport, self.command, self.url, self.env, self.cwd)

    @property
    def shown(self) -> str:
        """The command line or URL, as error sentences and `%agent mcp` show it."""
        return self.url or shlex.join(self.command)


def parse_spec(
    source: str | ServerSpec,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    readonly: bool | None = None,
    start_timeout: float | None = None,
) -> ServerSpec:
    """The spec for `"COMMAND ARGS…"` or `http(s)://…`; raise `McpServerError` naming what is wrong with it."""
    if isinstance(source, ServerSpec):
        return source
    if not isinstance(source, str) or not source.strip():
        raise McpServerError(f"an MCP server is a command line or an http(s) URL, got {source!r}")
    if readonly not in (None, True, False):
        raise McpServerError(f"readonly= takes True, False or None for an MCP server, got {readonly!r}")
    timeout = DEFAULT_START_TIMEOUT if start_timeout is None else float(start_timeout)
    if timeout <= 0:
        raise McpServerError(f"start_timeout= must be a positive number of seconds, got {start_timeout!r}")
    text = source.strip()
    if re.match(r"^https?://", text):
        if env or cwd:
            raise McpServerError(f"env= and cwd= apply to a server agentcell starts; {text} is reached over HTTP")
        parsed = urlparse(text)
        if not parsed.hostname:
            raise McpServerError(f"cannot read a host in the MCP server URL {text!r}")
        default = "http_" + (f"{parsed.hostname}_{parsed.port}" if parsed.port else parsed.hostname)
        return ServerSpec(
            name=_checked_name(name or _safe(default)), transport="http", url=text, readonly=readonly,
            start_timeout=timeout,
        )
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise McpServerError(f"cannot read the MCP server command {text!r}: {exc}") from None
    if argv[0] in ("python", "python3"):
        argv = (sys.executable, *argv[1:])  # the kernel's own interpreter, where `pip install` put the server
    return ServerSpec(
        name=_checked_name(name or default_name(argv)),
        transport="stdio",
        command=argv,
        env=tuple(sorted((str(k), str(v)) for k, v in (env or {}).items())),
        cwd=None if cwd is None else str(cwd),
        readonly=readonly,
        start_timeout=timeout,
    )


def default_name(argv: tuple[str, ...]) -> str:
    """`python -m mcp_server_time` → `time`; `npx -y @scope/server-files` → `files`; `./my_server.py` → `my`."""
    words = list(argv)
    if "-m" in words[:-1]:
        word = words[words.index("-m") + 1]
    else:
        rest = [w for w in words[1:] if not w.startswith("-")]
        launcher = Path(words[0]).name in ("npx", "uvx", "pipx", "node", "deno", "bun", "uv") or Path(
            words[0]
        ).name.startswith("python")
        word = rest[0] if launcher and rest else words[0]
    word = Path(word.split("@")[-1] if word.startswith("@") else word).name
    word = word.split("@")[0]
    for prefix in _PREFIXES:
        if word.startswith(prefix) and len(word) > len(prefix):
            word = word[len(prefix):]
    changed = True
    while changed:  # `shelf_server.py` → `shelf_server` → `shelf`
        changed = False
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) > len(suffix):
                word, changed = word[: -len(suffix)], True
    return _safe(word) or "mcp"


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")


def _checked_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", name):
        raise McpServerError(
            f"an MCP server name is letters, digits, '_' and '-' (it prefixes tool names), got {name!r}"
        )
    return name
