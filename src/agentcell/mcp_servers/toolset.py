"""`McpTools`: an MCP server as a pydantic-ai toolset that agentcell can judge, show, share and move.

What `agentcell.mcp(...)` returns and what `--mcp` builds. It holds only a `ServerSpec`, so it pickles
(a Dask worker starts its own server from it) and many runs share one server (`registry.ensure`). The
server starts the first time a run asks for its tools, never at construction, so a run that does not use it
never waits for it.

Each tool's definition is given agentcell's policy from the server's own hints: `readOnlyHint: true` →
`metadata["readonly"]` (no approval; may overlap guards), anything else (`destructiveHint`, no hint) is a
write, which `--approve writes` asks about. `ServerSpec.readonly` overrides the hints for the whole server.
The definition also carries `metadata["mcp_server"]` (the server's name), and its description starts with
`(MCP server NAME)`, so the model reads where a tool comes from.

Faults become one sentence the model (and the tool card) reads as the call's error: a tool that raised
on the server, a server that died mid-call (named with its stderr's last lines; the server is then ended
and the next use starts a fresh one). A server that cannot start fails the slot that needs it with an
`McpServerError` in one sentence.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema, to_jsonable_python

from . import registry
from .spec import ServerSpec
from .tape import Tape

_ANY_ARGS = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
"""Replayed tools' arguments are checked by the tape (the same tool with the same arguments), not a schema."""

SERVER_KEY = "mcp_server"
"""`ToolDefinition.metadata` key naming the MCP server a tool comes from."""


class McpTools(AbstractToolset[Any]):
    """The tools of one MCP server (see the module docstring); `only` keeps the tools matching its patterns."""

    def __init__(self, spec: ServerSpec, *, only: Sequence[str] | None = None, tape: Tape | None = None) -> None:
        self.spec = spec
        self.only = tuple(only) if only is not None else None
        self.tape = tape
        """Recording the server's tools and calls, or replaying them without starting it (`tape.py`)."""
        self._offered: tuple[Any, Any, int, dict[str, ToolsetTool[Any]]] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (McpTools, (self.spec,), {"only": self.only})

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.only = state.get("only")
        self.tape = None
        self._offered = None

    def taped(self, tape: Tape | None) -> McpTools:
        """This server with its tools and calls recorded on `tape`, or answered from it (`None`: neither)."""
        return McpTools(self.spec, only=self.only, tape=tape)

    def __repr__(self) -> str:
        return f"agentcell.mcp({self.spec.shown!r}, name={self.spec.name!r})"

    @property
    def id(self) -> str | None:
        return f"mcp:{self.spec.name}"

    @property
    def label(self) -> str:
        return f"MCP server {self.spec.name!r}"

    def selected(self, patterns: Sequence[str]) -> McpTools:
        """This server with only the tools matching `patterns` (`*`, `git_*`, `git_status`)."""
        return McpTools(self.spec, only=tuple(patterns), tape=self.tape)

    def wants(self, name: str) -> bool:
        return self.only is None or any(fnmatch.fnmatchcase(name, pattern) for pattern in self.only)

    async def __aenter__(self) -> McpTools:
        return self  # the registry owns the server's lifetime, not the run

    async def __aexit__(self, *args: Any) -> bool | None:
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if self.tape is not None and self.tape.mode == "replay":
            return self._replayed_tools(ctx)
        live = await registry.ensure(self.spec)
        assert live.toolset is not None
        listed = await live.toolset.list_tools()  # the client's cached list: a new list when the server's changed
        cached = self._offered
        if cached is not None and cached[0] is live and cached[1] is listed and cached[2] == ctx.max_retries:
            return cached[3]  # every step asks: mapping the same definitions again cost ~5% of a call
        offered = await live.toolset.get_tools(ctx)
        if self.tape is not None:
            self.tape.record_tools(self.spec.name, [
                {"name": t.tool_def.name, "description": t.tool_def.description,
                 "parameters": t.tool_def.parameters_json_schema, "metadata": _plain(t.tool_def.metadata)}
                for t in offered.values()
            ])
        tools: dict[str, ToolsetTool[Any]] = {}
        for name, tool in offered.items():
            if not self.wants(name):
                continue
            metadata = dict(tool.tool_def.metadata or {})
            metadata["readonly"] = readonly_of(metadata.get("annotations"), self.spec.readonly)
            metadata[SERVER_KEY] = self.spec.name
            described = f"(MCP server {self.spec.name}) {tool.tool_def.description or ''}".rstrip()
            tool_def = replace(tool.tool_def, metadata=metadata, description=described)
            tools[name] = replace(tool, toolset=self, tool_def=tool_def)
        self._offered = (live, listed, ctx.max_retries, tools)
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if self.tape is not None and self.tape.mode == "replay":
            try:
                recorded = self.tape.answer(self.spec.name, name, tool_args)
            except LookupError as exc:
                raise ToolFailed(str(exc)) from None
            if "error" in recorded:
                raise ToolFailed(str(recorded["error"]))
            return recorded.get("result")
        if self.tape is None:
            return await self._call(name, tool_args, ctx, tool)
        try:
            value = await self._call(name, tool_args, ctx, tool)
        except ToolFailed as exc:
            self.tape.record_call(self.spec.name, name, tool_args, error=str(exc.message))
            raise
        self.tape.record_call(self.spec.name, name, tool_args, result=value)
        return value

    def _replayed_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        assert self.tape is not None
        tools: dict[str, ToolsetTool[Any]] = {}
        for entry in self.tape.tools(self.spec.name):
            name = str(entry["name"])
            if not self.wants(name):
                continue
            metadata = dict(entry.get("metadata") or {})
            metadata["readonly"] = readonly_of(metadata.get("annotations"), self.spec.readonly)
            metadata[SERVER_KEY] = self.spec.name
            tool_def = ToolDefinition(
                name=name, description=f"(MCP server {self.spec.name}) {entry.get('description') or ''}".rstrip(),
                parameters_json_schema=dict(entry.get("parameters") or {"type": "object", "properties": {}}),
                metadata=metadata,
            )
            tools[name] = ToolsetTool(toolset=self, tool_def=tool_def, max_retries=ctx.max_retries,
                                      args_validator=_ANY_ARGS)
        return tools

    async def _call(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        live = await registry.ensure(self.spec)
        assert live.toolset is not None
        live.calls += 1
        try:
            # An image or an embedded file stays pydantic-ai's `BinaryContent`: the engine makes it media the
            # model reads and the views show as a thumbnail (`media/tool_parts.py`).
            return await live.toolset.call_tool(name, tool_args, ctx, replace(tool, toolset=live.toolset))
        except (ApprovalRequired, CallDeferred):
            raise
        except ToolFailed as exc:
            raise ToolFailed(f"the MCP tool {name!r} of server {self.spec.name!r} failed: {exc.message}") from None
        except ModelRetry as exc:
            if _connection_lost(exc.message):
                raise ToolFailed(live.mark_failed(f"stopped answering during the call of {name!r}")) from None
            raise
        except Exception as exc:
            what = f"failed during the call of {name!r}: {type(exc).__name__}: {exc}"
            raise ToolFailed(live.mark_failed(what)) from None


def readonly_of(annotations: Any, override: bool | None) -> bool:
    """A tool is read-only when the server's override says so, or else when its `readOnlyHint` is true."""
    if override is not None:
        return override
    if not isinstance(annotations, dict):
        return False
    return annotations.get("readOnlyHint") is True and annotations.get("destructiveHint") is not True


def _plain(value: Any) -> Any:
    return to_jsonable_python(value, fallback=repr)


def _connection_lost(message: str) -> bool:
    return any(word in message for word in ("Connection closed", "connection closed", "Broken pipe", "EOF"))
