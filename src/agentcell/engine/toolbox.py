"""Turning the caller's callables into pydantic-ai tools, once per run.

pydantic-ai derives each schema from the signature and docstring and validates arguments. Two things
are changed on the way in:

* a sync function is called through `anyio.to_thread.run_sync(..., abandon_on_cancel=True)`, so it
  never blocks the loop *and* Stop does not wait for it (pydantic-ai's own thread call shields the
  await until the thread returns, which would make Stop wait out a slow tool);
* per-tool timeouts are enforced by our wrapper (an error string the model reads), not by
  pydantic-ai's `timeout=` (which spends a retry).

Besides callables and `pydantic_ai.Tool` objects, OpenAI-style declarations
(`{"type": "function", "function": {"name", "description", "parameters"}}`, as llmbroker and pollux
take them) become tools through `Tool.from_schema`, calling the function `dispatch` maps the name to.
pydantic-ai skips argument validation for such tools, so `_schema_check` refuses missing, unknown
and wrongly typed top-level arguments before the call, as for any other tool.

The run's `toolsets=` (any pydantic-ai toolset) are not built here: their tools are known only when
pydantic-ai asks them, per step. Each is given a policy from its definition when it is offered
(`foreign_policy`, `offered_tool`): `metadata={"readonly": True}` as for a `Tool`, the per-tool timeout
taken over by the engine, approval when pydantic-ai's definition asks for it or `approve_writes` does.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio.to_thread
from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ModelRetry, UserError
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from ..errors import ToolDefinitionError
from ..options import Dispatch as Dispatch
from ..options import ToolLike as ToolLike
from ..tools import ToolPolicy, policy_of


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolEntry:
    """One tool as the engine runs it."""

    tool: Tool[Any]
    policy: ToolPolicy


class ToolRegistry:
    """The run's tools by the name the model sees."""

    def __init__(self, entries: Mapping[str, ToolEntry]) -> None:
        self.entries = dict(entries)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def select(self, names: Sequence[str] | None, *, elsewhere: bool = False) -> dict[str, ToolEntry]:
        """The entries a slot may use (`tools=a+b` restricts them); unknown names are an error, unless they may
        be `elsewhere`: in the run's `toolsets=`, whose tools are known only when the run asks them."""
        if names is None:
            return dict(self.entries)
        unknown = [name for name in names if name not in self.entries]
        if unknown and elsewhere:
            return {name: self.entries[name] for name in names if name in self.entries}
        if unknown:
            known = ", ".join(self.entries) or "none"
            raise ToolDefinitionError(f"unknown tool {unknown[0]!r} in tools=; this run's tools are: {known}")
        return {name: self.entries[name] for name in names}

    def schemas(self) -> tuple[dict[str, Any], ...]:
        """Each tool as the model sees it: name, description and JSON schema of its arguments."""
        return tuple(
            {
                "name": name,
                "description": entry.tool.tool_def.description,
                "parameters_json_schema": entry.tool.tool_def.parameters_json_schema,
            }
            for name, entry in self.entries.items()
        )


def build_registry(
    tools: Sequence[ToolLike], *, dispatch: Dispatch | None = None, approve_writes: bool = False
) -> ToolRegistry:
    """Build the run's tools; raise `ToolDefinitionError` for a bad callable or a duplicate name."""
    entries: dict[str, ToolEntry] = {}
    for item in tools:
        if isinstance(item, Tool):
            entry = _from_tool(item)
        elif isinstance(item, Mapping):
            entry = _from_declaration(item, dispatch or {})
        else:
            entry = _from_callable(item)
        if approve_writes and not entry.policy.readonly and not entry.policy.approve:
            entry = _needing_approval(entry)
        name = entry.tool.name
        if name in entries:
            raise ToolDefinitionError(f"two tools are named {name!r}; rename one with @tool(name=...)")
        entries[name] = entry
    return ToolRegistry(entries)


def _from_callable(fn: Callable[..., Any]) -> ToolEntry:
    if not callable(fn):
        raise ToolDefinitionError(f"{fn!r} is not callable and cannot be a tool")
    policy = policy_of(fn) or ToolPolicy()
    try:
        with warnings.catch_warnings():
            # `-> Figure`, `-> Image.Image`, `-> pd.DataFrame`: pydantic-ai has no schema for the return type and
            # warns; the engine sends such a value as a picture or a table (`media.py`), so there is nothing to fix.
            warnings.filterwarnings("ignore", "Could not generate return schema", UserWarning)
            tool: Tool[Any] = Tool(
                fn,
                name=policy.name,
                requires_approval=policy.approve,
                sequential=policy.sequential,
                metadata={"readonly": policy.readonly},
            )
    except (UserError, TypeError, ValueError, NameError) as exc:
        raise ToolDefinitionError(f"cannot turn {fn!r} into a tool: {exc}") from exc
    _run_sync_in_thread(tool)
    return ToolEntry(tool=tool, policy=policy)


def _from_tool(original: Tool[Any]) -> ToolEntry:
    tool = copy.copy(original)
    metadata = tool.metadata or {}
    policy = ToolPolicy(
        readonly=bool(metadata.get("readonly", False)),
        approve=tool.requires_approval,
        timeout=tool.timeout,
        name=tool.name,
        sequential=tool.sequential,
    )
    tool.timeout = None  # enforced by our wrapper as an error string instead of a retry
    _run_sync_in_thread(tool)
    return ToolEntry(tool=tool, policy=policy)


def _from_declaration(declaration: Mapping[str, Any], dispatch: Dispatch) -> ToolEntry:
    spec = declaration.get("function", declaration) if declaration.get("type", "function") == "function" else None
    name = spec.get("name") if isinstance(spec, Mapping) else None
    if not isinstance(spec, Mapping) or not isinstance(name, str):
        raise ToolDefinitionError(
            f"cannot read the tool declaration {dict(declaration)!r}: expected "
            '{"type": "function", "function": {"name": ..., "parameters": {...}}}'
        )
    function = dispatch.get(name)
    if function is None or not callable(function):
        known = ", ".join(dispatch) or "nothing"
        raise ToolDefinitionError(f"tool {name!r} is declared but dispatch= has no function for it (it maps {known})")
    schema = dict(spec.get("parameters") or {"type": "object", "properties": {}})
    policy = replace(policy_of(function) or ToolPolicy(), name=name)
    tool: Tool[Any] = Tool.from_schema(
        function,
        name=name,
        description=spec.get("description"),
        json_schema=schema,
        sequential=policy.sequential,
        args_validator=functools.partial(_schema_check, schema),
    )
    tool.requires_approval = policy.approve
    tool.metadata = {"readonly": policy.readonly}
    _run_sync_in_thread(tool)
    return ToolEntry(tool=tool, policy=policy)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _schema_check(schema: Mapping[str, Any], ctx: RunContext[Any], /, **args: Any) -> None:
    """Refuse missing, unknown and wrongly typed top-level arguments (the model reads why and retries)."""
    properties: Mapping[str, Any] = schema.get("properties") or {}
    problems = [f"missing required argument {key!r}" for key in schema.get("required", ()) if key not in args]
    if properties and schema.get("additionalProperties") is not True:
        problems += [f"unknown argument {key!r}" for key in args if key not in properties]
    for key, value in args.items():
        expected = (properties.get(key) or {}).get("type")
        kinds = [expected] if isinstance(expected, str) else list(expected or [])
        allowed = tuple(t for kind in kinds for t in _JSON_TYPES.get(kind, (object,)))
        wrong_bool = isinstance(value, bool) and "boolean" not in kinds
        if allowed and (not isinstance(value, allowed) or wrong_bool):
            problems.append(f"argument {key!r} should be {' or '.join(kinds)}, got {type(value).__name__}")
    if problems:
        raise ModelRetry("; ".join(problems))


def check_toolsets(toolsets: Sequence[Any]) -> None:
    """Refuse a `toolsets=` item that is not a pydantic-ai toolset (before any request, naming what it was)."""
    if isinstance(toolsets, (str, bytes, AbstractToolset)):
        raise ToolDefinitionError(f"toolsets= takes a list of pydantic-ai toolsets, got {type(toolsets).__name__}")
    for item in toolsets:
        if not isinstance(item, AbstractToolset):
            raise ToolDefinitionError(
                f"toolsets= takes pydantic-ai toolsets (FunctionToolset, an MCP server, any AbstractToolset); "
                f"{item!r} is a {type(item).__name__} (a function or Tool goes in tools=)"
            )


def foreign_policy(tool_def: ToolDefinition, *, approve_writes: bool) -> ToolPolicy:
    """The policy of a tool offered by one of the run's `toolsets=`, read from its definition."""
    readonly = bool((tool_def.metadata or {}).get("readonly", False))
    approve = tool_def.kind == "unapproved" or (approve_writes and not readonly and tool_def.kind == "function")
    return ToolPolicy(
        readonly=readonly, approve=approve, timeout=tool_def.timeout, name=tool_def.name, sequential=tool_def.sequential
    )


def offered_tool(tool: ToolsetTool[Any], policy: ToolPolicy) -> ToolsetTool[Any]:
    """`tool` as the engine offers it: its timeout enforced by the engine (an error string the model reads, not
    pydantic-ai's retry; pydantic-ai hands the definition it was given down to the toolset that runs it), and
    deferred for approval when its policy says so."""
    tool_def = tool.tool_def
    kind = "unapproved" if policy.approve and tool_def.kind == "function" else tool_def.kind
    if tool_def.timeout is None and kind == tool_def.kind:
        return tool
    return replace(tool, tool_def=replace(tool_def, timeout=None, kind=kind))


def _needing_approval(entry: ToolEntry) -> ToolEntry:
    tool = copy.copy(entry.tool)
    tool.requires_approval = True
    return ToolEntry(tool=tool, policy=replace(entry.policy, approve=True))


def _run_sync_in_thread(tool: Tool[Any]) -> None:
    schema = tool.function_schema
    if schema.is_async:
        return
    function = schema.function

    async def in_thread(*args: Any, **kwargs: Any) -> Any:
        # abandon_on_cancel: on Stop the await ends at once; the thread finishes on its own and
        # its late result is dropped.
        call = functools.partial(function, *args, **kwargs)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    tool.function_schema = replace(schema, function=in_thread, is_async=True)
