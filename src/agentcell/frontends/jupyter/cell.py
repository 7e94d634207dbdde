"""From a `%%agent` cell to a ready-to-start run: everything the magic decides before any model call.

`cell_options` turns the magic's flags into `RunOptions`; `build_spec` takes those plus the cell's own
fields, compiles the template, snapshots the namespace and picks the tools. It raises agentcell errors
(turned into one-line `UsageError`s by the magic). Kept apart from `magics.py` so the same rules serve
the background, `--wait`, terminal and `--over` modes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from ...options import NO_DEPS, RunOptions
from ...usage import MAX_OUTPUT_TOKENS, MAX_REQUESTS, MAX_TOOL_CALLS, OutputMode
from ..launch import LaunchSpec
from .notebook import current_cell_id, namespace_snapshot, notebook_tools, notebook_toolsets

if TYPE_CHECKING:
    from ...template import CompiledTemplate


def build_spec(
    cell: str,
    options: RunOptions,
    *,
    user_ns: Mapping[str, Any],
    hidden: Mapping[str, Any] | None = None,
    tools: Sequence[str] | None = None,
    record: str | None = None,
    replay: str | None = None,
    include_paths: Sequence[str] = (),
    types: Sequence[str] = (),
    wait: bool = False,
    quiet: bool = False,
    output: str | None = None,
    shell: Any = None,
) -> LaunchSpec:
    """Compile and check a cell; raise `TemplateSyntaxError`/`ToolDefinitionError`/`TypeDefinitionError`
    before any model call.

    `options` are the run's (`cell_options` builds them from the magic's flags); the rest is the cell's
    own: the namespace (its variables join `options.context`, which wins), the tools it exposes by name
    (`--tools`, joining `options.tools`), the cassette flags (which wrap `options.model`), include paths
    and `--types` files, and how the cell shows the run.
    """
    template = compile_cell(cell, include_paths=include_paths, types=types)
    ctx = namespace_snapshot(user_ns, hidden)
    ctx.update(options.context or {})
    template.check_context(ctx)  # the mapping: custom-named @action functions are found by their values
    options = replace(
        options,
        context=ctx,
        model=cassette_model(options.model, record=record, replay=replay),
        tools=(*notebook_tools(user_ns, tools), *options.tools),
        toolsets=(*notebook_toolsets(user_ns, tools), *options.toolsets),
    )
    return LaunchSpec(
        template=template,
        options=options,
        wait=wait,
        quiet=quiet,
        output=output,
        key=current_cell_id(shell) if shell is not None else None,
        hint=stop_hint() if wait else "",
        record=record,
        replay=replay,
    )


def cell_options(
    *,
    model: str | Model | None = None,
    context: Mapping[str, Any] | None = None,
    deps: Any = None,
    max_iter: int = MAX_REQUESTS,
    max_calls: int = MAX_TOOL_CALLS,
    max_tokens: int = MAX_OUTPUT_TOKENS,
    approve: str = "none",
    history_from: tuple[ModelMessage, ...] | None = None,
    max_cost: float | None = None,
    output_mode: OutputMode = "auto",
) -> RunOptions:
    """The `RunOptions` a cell's flags (and `%agent config`) ask for: `--model`, `--context`, `--deps` (its
    type is `deps_type`), the budget flags as one `UsageLimits`, `--approve writes`, `--continue`, `--max-cost`,
    `--output-mode`."""
    return RunOptions(
        context=context,
        model=model,
        deps=deps,
        deps_type=type(deps) if deps is not None else NO_DEPS,
        limits=UsageLimits(request_limit=max_iter, tool_calls_limit=max_calls, output_tokens_limit=max_tokens),
        approve_writes=approve == "writes",
        history=history_from,
        cost_limit=max_cost,
        output_mode=output_mode,
    )


CELL_NAME = "<%%agent cell>"
"""How errors name the cell (the magic renumbers its lines; an included file keeps its own name)."""


def compile_cell(cell: str, *, include_paths: Sequence[str] = (), types: Sequence[str] = ()) -> CompiledTemplate:
    """Compile a `%%agent` cell: includes relative to the working directory (the notebook's folder)
    and `--include-path`s; `--types` files loaded now, so a bad one fails before the run starts."""
    from ...template import compile_template

    return compile_template(cell, name=CELL_NAME, include_paths=include_paths, types=types or None)


def cassette_model(model: str | Model | None, *, record: str | None, replay: str | None) -> str | Model | None:
    """`model` as `--record` / `--replay` change it (`ModelConfigError` for a missing cassette or both flags)."""
    if record is None and replay is None:
        return model
    from ...errors import ModelConfigError
    from ...providers.cassette import replay as replaying
    from ...providers.models import record as recording

    if record is not None and replay is not None:
        raise ModelConfigError("--record and --replay cannot be used together (replay a cassette, or record one)")
    if replay is not None:
        return replaying(replay)
    assert record is not None
    return recording(record, model)


def stop_hint() -> str:
    """What to tell a `--wait` user whose kernel queues the Stop click until the cell ends."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major, minor = (int(part) for part in version("ipykernel").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return ""
    if (major, minor) >= (7, 4):
        return ""
    return "This cell waits for the run; if Stop does not react, use Kernel › Interrupt."


def tool_schemas(user_ns: Mapping[str, Any], names: Sequence[str] | None = None) -> dict[str, Any]:
    """Each exposed tool's name → description and JSON schema (as the model sees them) and its policy."""
    from ...engine.toolbox import build_registry

    registry = build_registry(notebook_tools(user_ns, names))
    return {
        schema["name"]: {
            "description": schema["description"],
            "parameters": schema["parameters_json_schema"],
            "readonly": registry.entries[schema["name"]].policy.readonly,
            "approve": registry.entries[schema["name"]].policy.approve,
        }
        for schema in registry.schemas()
    }
