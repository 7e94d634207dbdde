"""From a cell to a ready-to-start run: everything `%%agent` decides before any model call.

`build_spec` compiles the template, snapshots the namespace, picks the tools and builds the budget
ceiling. It raises agentcell errors (turned into one-line `UsageError`s by the magic). Kept apart
from `magics.py` so the same rules serve the background, `--wait` and terminal modes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.usage import UsageLimits

from .notebook import current_cell_id, namespace_snapshot, notebook_tools, notebook_toolsets
from .options import NO_DEPS, ApproveCallback, RunOptions
from .template.program import Template
from .usage import MAX_OUTPUT_TOKENS, MAX_REQUESTS, MAX_TOOL_CALLS

if TYPE_CHECKING:
    from .engine import Run
    from .template import CompiledTemplate


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchSpec:
    """Everything a run started from a cell needs: the compiled template, its run options, how to show it."""

    template: Template
    """The compiled cell."""
    options: RunOptions
    """What the engine is told (the context is the namespace snapshot plus `--context`)."""
    wait: bool = False
    """`--wait`: the cell blocks until the run ends."""
    quiet: bool = False
    """`--quiet`: no widget."""
    output: str | None = None
    """`-o NAME`: the variable the run handle is bound to."""
    key: str | None = None
    """The front end's cell id: re-running the same cell stops its previous run."""
    hint: str = ""
    """Shown under the widget (e.g. how to stop a `--wait` cell on an old ipykernel)."""
    record: str | None = None
    """`--record FILE`: the cassette the run's model responses are written to (`model` records into it)."""
    replay: str | None = None
    """`--replay FILE`: the cassette `model` answers from."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    hints: Literal["cell", "python"] = "cell"
    """Whose words budget hints use: a cell's flags (`--max-iter`) or Python's (`limits=UsageLimits`)."""


def build_spec(
    cell: str,
    *,
    user_ns: Mapping[str, Any],
    hidden: Mapping[str, Any] | None = None,
    model: str | Model | None = None,
    tools: Sequence[str] | None = None,
    context: Mapping[str, Any] | None = None,
    deps: Any = None,
    max_iter: int = MAX_REQUESTS,
    max_calls: int = MAX_TOOL_CALLS,
    max_tokens: int = MAX_OUTPUT_TOKENS,
    approve: str = "none",
    history_from: tuple[ModelMessage, ...] | None = None,
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
    before any model call."""
    template = compile_cell(cell, include_paths=include_paths, types=types)
    ctx = namespace_snapshot(user_ns, hidden)
    ctx.update(context or {})
    template.check_context(ctx)  # the mapping: custom-named @action functions are found by their values
    options = RunOptions(
        context=ctx,
        model=cassette_model(model, record=record, replay=replay),
        tools=tuple(notebook_tools(user_ns, tools)),
        toolsets=tuple(notebook_toolsets(user_ns, tools)),
        deps=deps,
        deps_type=type(deps) if deps is not None else NO_DEPS,
        limits=UsageLimits(request_limit=max_iter, tool_calls_limit=max_calls, output_tokens_limit=max_tokens),
        approve_writes=approve == "writes",
        history=history_from,
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


CELL_NAME = "<%%agent cell>"
"""How errors name the cell (the magic renumbers its lines; an included file keeps its own name)."""


def compile_cell(cell: str, *, include_paths: Sequence[str] = (), types: Sequence[str] = ()) -> CompiledTemplate:
    """Compile a `%%agent` cell: includes relative to the working directory (the notebook's folder)
    and `--include-path`s; `--types` files loaded now, so a bad one fails before the run starts."""
    from .template import compile_template

    return compile_template(cell, name=CELL_NAME, include_paths=include_paths, types=types or None)


def cassette_model(model: str | Model | None, *, record: str | None, replay: str | None) -> str | Model | None:
    """`model` as `--record` / `--replay` change it (`ModelConfigError` for a missing cassette or both flags)."""
    if record is None and replay is None:
        return model
    from .errors import ModelConfigError
    from .models import record as recording
    from .providers.cassette import replay as replaying

    if record is not None and replay is not None:
        raise ModelConfigError("--record and --replay cannot be used together (replay a cassette, or record one)")
    if replay is not None:
        return replaying(replay)
    assert record is not None
    return recording(record, model)


def start(spec: LaunchSpec, *, approve: ApproveCallback | None = None) -> Run:
    """Start the engine run a spec describes, on the running loop; returns the engine's `Run`.

    The one place a spec reaches the engine (background, `--wait` and terminal modes and `show()` all
    come through here); `approve` is the widget's Approve/Deny callback, if any, and takes the place
    of `spec.options.approve`.
    """
    from .engine import start
    from .options import HINT_STYLE

    options = spec.options if approve is None else replace(spec.options, approve=approve)
    token = HINT_STYLE.set(spec.hints)  # the run's task copies this context: its messages speak the front end's words
    try:
        return start(spec.template, options)
    finally:
        HINT_STYLE.reset(token)


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
    from .engine.toolbox import build_registry

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
