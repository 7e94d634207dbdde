"""`RunOptions`: every option of a run, with its default, in one frozen value; and its keyword forms.

The engine's `start(template, options)` takes it; `LaunchSpec` holds one, and the `%%agent` magic builds
one from its flags and hands it to `jupyter.cell.build_spec`. The public functions (`start_run`, `stream`,
`complete_async`, `complete`, `complete_incremental_async`, `show`, `map`) take the options as keywords,
typed once here (PEP 692): `**options: Unpack[RunOptionsKwargs]` (or a surface's subset), so mypy and
IDEs check every keyword's name and type. `@option_keywords` writes those keywords, with `RunOptions`'
defaults, into the function's signature for `help()`, IPython's `?` and keyword completion, and
`options_for` turns the keywords into a `RunOptions`, naming any unknown one and its close matches.
Adding an option is one change here: its field in `RunOptions` and its key in the group of surfaces
that take it (`_EveryRunKeywords` for all); `tests/house/test_options.py` fails while the two disagree.

The types the options are made of live here too, below the engine, so every layer can name them:
`ToolLike`/`Dispatch`/`ToolsetLike`, `ApprovalDecision`/`ApproveCallback` and `Compaction`. The default budget
ceilings are `usage.MAX_REQUESTS`, `MAX_TOOL_CALLS` and `MAX_OUTPUT_TOKENS`, beside `Limits` (which
events and results carry, and this module imports them); `limits=None` means exactly those.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import MISSING, dataclass, fields
from datetime import datetime
from typing import Any, Literal, TypeAlias, TypedDict, TypeVar, get_args

from pydantic_ai import Tool
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import UsageLimits

from .events import ApprovalRequested
from .journal import JournalOption
from .result import RunResult
from .usage import OutputMode

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
    describe_media: str | Model | None = None
    """A model that describes the images, documents and audio a slot's model cannot read (pydantic-ai's
    `FileUnderstanding`: the description goes in the file's place); `None`: such a prompt is refused, in one
    sentence, before its request (`%%agent --describe-media MODEL`)."""
    cost_limit: float | None = None
    """USD: once the run's known cost reached this, it sends no further request and ends `budget_exhausted`
    (`--max-cost` on one cell's run; a batch's `max_cost` is its own). Known means priced: a model with no
    published price never reaches it."""
    # ---- lesson mode (step, predict, break it) ----
    step: bool = False
    """Pause before every model request and every tool call until `handle.step()` / the widget's Next (or `go()`);
    nothing is in flight while paused (no provider connection open)."""
    predict: bool = False
    """With `step`: at each pause before a model request, ask what the model will do (`handle.predict(...)`, the
    widget's question); the guesses are kept in `RunResult.predictions`."""
    inject: Sequence[str] = ()
    """Faults to inject on purpose, labelled "injected" wherever they show: `TOOL=error[:message]`, `TOOL=timeout`,
    `TOOL=wrong-type`, `TOOL=slow:SECONDS`, `model=429[:retry-after]`, `model=500`, `model=drop`,
    `model=slow:TOKENS_PER_S`, each once or `*N` times (`providers/faults.py`)."""
    output_mode: OutputMode = "auto"
    """How typed slots ask for their value: `tool`, `native`, `prompted` or `auto` (see `usage.OutputMode`); a
    slot's `output_mode=` wins. `auto` falls back to `prompted`, visibly, on a server that answers a required
    tool call with nothing or with prose."""


# The keyword forms of `RunOptions`, in groups by which surfaces take them (a TypedDict cannot narrow a
# key it inherits, so a surface's subset is the groups it takes). Each key's type is its field's.


class _ModelKeyword(TypedDict, total=False):
    """`model`: the struckdown-named functions declare it themselves (wider: struckdown's `LLM` too)."""

    model: str | Model | None


class _EveryRunKeywords(TypedDict, total=False):
    """The options every surface takes; a new option goes here unless some surface cannot honour it."""

    context: Mapping[str, Any] | None
    tools: Sequence[ToolLike]
    dispatch: Dispatch | None
    toolsets: Sequence[ToolsetLike]
    deps: Any
    deps_type: type[Any]
    limits: UsageLimits | None
    approve_writes: bool
    context_window: int | None
    compaction: Compaction | None
    journal: JournalOption
    now: datetime | None
    describe_media: str | Model | None
    inject: Sequence[str]
    output_mode: OutputMode


class _ApproveKeyword(TypedDict, total=False):
    """`approve`: `show()` answers approvals with its widget's buttons instead."""

    approve: ApproveCallback | None


class _OneRunKeywords(TypedDict, total=False):
    """What belongs to one run: `map()`'s rows are runs of their own."""

    history: Sequence[ModelMessage] | None
    run_id: str | None
    resume_from: RunResult | None
    cost_limit: float | None


class _StepKeywords(TypedDict, total=False):
    """`step`, `predict`: a run someone steps through (`start_run`, `show()`); `complete()` could never go on."""

    step: bool
    predict: bool


class RunOptionsKwargs(_ModelKeyword, _EveryRunKeywords, _ApproveKeyword, _OneRunKeywords, _StepKeywords, total=False):
    """Every `RunOptions` field as a keyword (`start_run`, `stream`); each field's doc and default are there."""


class StreamOptionsKwargs(_ModelKeyword, _EveryRunKeywords, _ApproveKeyword, _OneRunKeywords, total=False):
    """`stream()`: every option but `step` and `predict` (its consumer holds no handle to press Next with, so a
    stepped stream would wait at its first pause for ever)."""


class CompleteOptionsKwargs(_EveryRunKeywords, _ApproveKeyword, _OneRunKeywords, total=False):
    """`complete`, `complete_async`, `complete_incremental_async`: `model` is their own keyword (it also
    takes struckdown's `LLM`, built into a model with `credentials=` before `RunOptions`)."""


class ShowOptionsKwargs(_ModelKeyword, _EveryRunKeywords, _OneRunKeywords, _StepKeywords, total=False):
    """`show()`: no `approve` (its widget's Approve / Deny buttons answer)."""


class MapOptionsKwargs(_ModelKeyword, _EveryRunKeywords, _ApproveKeyword, total=False):
    """`map()`, per row: no `history`, `run_id`, `resume_from` or `cost_limit` (each belongs to one run, a row is
    its own; the batch's cap is `map`'s `max_cost`)."""


LEFT_OUT: dict[str, str] = {
    "approve": "its widget's Approve / Deny buttons answer approvals",
    "history": "each row is a run of its own",
    "run_id": "each row is a run of its own",
    "resume_from": "each row is a run of its own",
    "cost_limit": "a batch's cap is its max_cost",
    "step": "nobody could press Next: use agentcell.start_run(..., step=True) or show(..., step=True)",
    "predict": "nobody could press Next: use agentcell.start_run(..., step=True) or show(..., step=True)",
}
"""Why a surface may not take an option (the sentence an unknown keyword's error ends with)."""

_Surface = TypeVar("_Surface", bound=Callable[..., Any])


def option_keywords(surface: _Surface) -> _Surface:
    """Show `surface`'s `**options: Unpack[...]` as the keywords they stand for, with `RunOptions`' defaults.

    Sets `__signature__`, which `help()`, `inspect.signature`, IPython's `?` and its keyword completion
    read: the options in `RunOptions`' order (a keyword the surface declares itself, like `complete`'s
    `model`, at its field's place), then the surface's own keywords. The function itself is unchanged.
    """
    signature = inspect.signature(surface)
    accepted = _unpacked(surface)
    params = list(signature.parameters.values())
    own = {p.name: p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    head = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    options: list[inspect.Parameter] = []
    for field in fields(RunOptions):
        if field.name in own:
            options.append(own.pop(field.name))
        elif field.name in accepted:
            default = field.default if field.default is not MISSING else inspect.Parameter.empty
            options.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                             annotation=field.type))
    surface.__signature__ = signature.replace(parameters=[*head, *options, *own.values()])  # type: ignore[attr-defined]
    return surface


def _unpacked(surface: Callable[..., Any]) -> frozenset[str]:
    """The keys of the TypedDict `surface`'s `**options` unpacks."""
    (typed,) = get_args(inspect.get_annotations(surface, eval_str=True)["options"])
    return frozenset(typed.__required_keys__ | typed.__optional_keys__)


def options_for(surface: Callable[..., Any], given: Mapping[str, Any], **resolved: Any) -> RunOptions:
    """The `RunOptions` a call of `surface` (decorated with `option_keywords`) asks for.

    `given` is the call's `**options`; `resolved` the fields the surface worked out itself (`complete`'s
    `model` from `model=` and `credentials=`).

    Raises:
        TypeError: a keyword `surface` does not take, named with its close matches (as Python names an
            unexpected keyword, plus the hint), or why the surface leaves that option out.
    """
    known = [p.name for p in inspect.signature(surface).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    for name in given:
        if name not in known:  # the surface's own keywords never reach `given`: Python binds them
            raise TypeError(_unexpected(surface.__name__, name, known))
    return RunOptions(**given, **resolved)


def _unexpected(surface: str, name: str, known: Sequence[str]) -> str:
    message = f"{surface}() got an unexpected keyword argument {name!r}"
    if name in LEFT_OUT:
        return f"{message}: {LEFT_OUT[name]}"
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        return f"{message}; did you mean {' or '.join(repr(c) for c in close)}?"
    return f"{message}; it takes {', '.join(known)}"
