"""`RunOptions`: every option of a run, with its default, in one frozen value.

The engine's `start(template, options)` takes it. `start_run`, `stream`, `complete_async`, `complete`
and `show` keep explicit keywords for users and IDEs and build a `RunOptions` from them (a test fails
if one of them lists a keyword `RunOptions` does not have, or misses one); `LaunchSpec` holds one,
and the `%%agent` magic builds it through `launch.build_spec`.

The types the options are made of live here too, below the engine, so every layer can name them:
`ToolLike`/`Dispatch`/`ToolsetLike`, `ApprovalDecision`/`ApproveCallback` and `Compaction`. The default budget
ceilings are `usage.MAX_REQUESTS`, `MAX_TOOL_CALLS` and `MAX_OUTPUT_TOKENS`, beside `Limits` (which
events and results carry, and this module imports them); `limits=None` means exactly those.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeAlias

from pydantic_ai import Tool
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import UsageLimits

from .events import ApprovalRequested
from .journal import JournalOption
from .result import RunResult

ToolLike: TypeAlias = Callable[..., Any] | Tool[Any] | Mapping[str, Any]
"""A callable, a `pydantic_ai.Tool`, or an OpenAI-style declaration (its function named in `dispatch`)."""

Dispatch: TypeAlias = Mapping[str, Callable[..., Any]]
"""Tool name → the function that runs an OpenAI-style declaration."""

ToolsetLike: TypeAlias = AbstractToolset[Any]
"""Any pydantic-ai toolset: a `FunctionToolset`, an MCP server, an `AbstractToolset` of your own."""

NO_DEPS: type[Any] = type(None)
"""The default `deps_type`: tools take no dependencies."""

HINT_STYLE: ContextVar[Literal["python", "cell"]] = ContextVar("agentcell_hint_style", default="python")
"""How budget hints name the knobs: `cell` (a `%%agent` cell: `--max-iter`, `max_iter=` on the slot) or
`python` (`limits=UsageLimits(...)`). Set around `start` by the front end; the run's task keeps it
(budget messages and the offline model's advice read it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecision:
    """The answer to an `ApprovalRequested`: allow the call, or deny it with a reason the model reads."""

    approved: bool
    """Whether the call may run."""
    reason: str | None = None
    """Shown to the model as the tool result when the call is denied."""


ApproveCallback: TypeAlias = Callable[[ApprovalRequested], Awaitable[ApprovalDecision | bool]]
"""`approve=`: asked before every call that needs approval; `True`/`False` or an `ApprovalDecision`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """How a run keeps long conversations inside the window; `compaction=None` turns it off."""

    threshold: float | None = 0.8
    """Summarize older turns when a request would carry more than this fraction of the window; `None`: never."""
    model: str | Model | None = None
    """The model that writes summaries (e.g. a cheaper one); `None`: the slot's model."""
    keep: float = 0.4
    """Recent messages kept verbatim, up to this fraction of the window (at least the request itself)."""
    tool_result_chars: int | None = 20_000
    """Tool results longer than this are cut for the model, with a marker; `None`: never cut."""


DEFAULT_COMPACTION = Compaction()
"""Compaction at 0.8 of the window, summaries by the slot's model, tool results cut past 20,000 characters."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """Everything a run can be told besides its template; every field has its default here."""

    context: Mapping[str, Any] | None = None
    """The template's variables (`{{ name }}`); a name the template uses and this lacks fails before any call."""
    model: str | Model | None = None
    """A pydantic-ai model or model string (`openai:gpt-4o-mini`); `None`: `$AGENTCELL_MODEL`, then offline."""
    tools: Sequence[ToolLike] = ()
    """Callables, `pydantic_ai.Tool` objects and OpenAI-style declarations the slots may call."""
    dispatch: Dispatch | None = None
    """Tool name → function, for the OpenAI-style declarations in `tools`."""
    toolsets: Sequence[ToolsetLike] = ()
    """pydantic-ai toolsets whose tools the slots may call beside `tools` (an MCP server, a `FunctionToolset`, ...);
    their calls are shown, cached, timed out and approved like those of `tools`."""
    deps: Any = None
    """The value tools receive as `RunContext.deps`."""
    deps_type: type[Any] = NO_DEPS
    """The type of `deps`, for tools that declare `RunContext[T]`."""
    limits: UsageLimits | None = None
    """The per-slot ceiling; a field left `None` (or `limits=None`) takes the default from `usage.MAX_*`."""
    approve: ApproveCallback | None = None
    """Asked before each call that needs approval (`@tool(approve=True)`, or every write with `approve_writes`)."""
    approve_writes: bool = False
    """Ask `approve` before every tool not marked `readonly`."""
    history: Sequence[ModelMessage] | None = None
    """A conversation to continue (e.g. an earlier `RunResult.messages`)."""
    run_id: str | None = None
    """The run's id (events, journal file); `None`: a new random one, or `resume_from`'s."""
    context_window: int | None = None
    """Overrides the model's known context window for the gauge and compaction."""
    compaction: Compaction | None = DEFAULT_COMPACTION
    """How long conversations are kept inside the window; `None` turns compaction and tool-result cutting off."""
    journal: JournalOption = None
    """`None`: the default journal folder; `False`: none; `True`, a folder or a `.jsonl` path."""
    resume_from: RunResult | None = None
    """A stopped run's result to go on from as its next segment (same template and context expected)."""
    now: datetime | None = None
    """The run's reference time for `date`/`datetime`/… slots ("next Tuesday"); `None`: the clock when the run
    starts, in the kernel's time zone (a resumed run keeps its first)."""
