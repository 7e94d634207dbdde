"""The events a run yields, in order, to every consumer (widget, terminal printer, `complete`).

Each event is a frozen value with a `kind` tag so consumers can `match` on the class and end with
`assert_never`. Every event carries the `run_id` (events of concurrent runs never mix) and the
`slot` it belongs to (`None` for run-level events). A run yields `RunStarted` first and exactly one
`ProcessingComplete` last, whatever happens in between: completion, Stop, a guard trip or an error.

Per slot: `SlotStarted`, then any of `TokenDelta`, `ThinkingDelta`, `SlotRetracted`, `ToolStarted`,
`ToolCompleted`, `ApprovalRequested`, `ApprovalResolved`, `Retrying`, `UsageUpdated`, `RunWarning`,
`GuardTripped`, `RequestCompleted`, `ContextUpdated`, `CompactionStarted`, `CompactionFinished`, and
finally `SlotCompleted` or `SlotFailed`. A resumed run yields `RunResumed` right after `RunStarted`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, get_args

# Re-exported (`from agentcell.events import Usage` keeps working); they are defined in `usage.py`.
from ..formats.frozen import faster_init
from ..usage import Limits as Limits
from ..usage import RunStatus as RunStatus
from ..usage import Usage as Usage
from .aliases import CheckpointAliases, DeltaAliases, SlotKey, ToolCompletedAliases, ToolStartedAliases

# Lesson mode's payloads (step pauses, injected faults, predictions); defined in `lesson.py`.
from .compaction import CompactionFinished as CompactionFinished
from .compaction import CompactionStarted as CompactionStarted
from .lesson import FaultInjected as FaultInjected
from .lesson import PredictionMade as PredictionMade
from .lesson import StepPaused as StepPaused
from .lesson import StepResumed as StepResumed
from .media import MediaAdded as MediaAdded

# Re-exported (`from agentcell.events import ModelRequestSent` keeps working); defined in `teaching.py`.
from .teaching import HttpExchange as HttpExchange
from .teaching import ModelRequestSent as ModelRequestSent
from .teaching import ModelResponseReceived as ModelResponseReceived

if TYPE_CHECKING:
    from ..result import RunResult

RetractReason: TypeAlias = Literal["gathering", "errored", "halted", "stopped"]
"""Why streamed text stopped counting as the answer.

`gathering`: the response went on to call tools, so the text was narration.
`errored`: the request failed after tokens were shown.
`halted`: a guard tripped after tokens were shown.
`stopped`: the run was stopped mid-answer (the partial text is kept, marked stopped).
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotInfo:
    """What the widget needs to lay out a slot before it runs."""

    name: str
    type: str
    """The type as written for people, as `SlotStarted.slot_type` says it (`think{2}`, `Person`, `@fetch`): a
    view tells free text from a value by it, also for a slot that does not start again in a resumed run."""
    required: bool = False
    use_tools: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    """The run began; lists its slots so a consumer can lay them out."""

    run_id: str
    model: str
    """Display name of the model (never includes a credential)."""
    offline: bool = False
    """True when the offline default model answers (no network, canned behaviour)."""
    offline_chosen: bool = False
    """With `offline`: the user chose it (`-m offline`, `AGENTCELL_MODEL=offline`) rather than configured nothing."""
    slots: tuple[SlotInfo, ...] = ()
    limits: Limits = field(default_factory=Limits)
    tools: tuple[str, ...] = ()
    tool_schemas: tuple[dict[str, Any], ...] = ()
    """Each tool as the model sees it: `{name, description, parameters_json_schema}`."""
    slot: str | None = None
    kind: Literal["run_started"] = "run_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotStarted(SlotKey):
    """A slot's first request is about to go out."""

    run_id: str
    slot: str
    slot_type: str
    index: int
    limits: Limits | None = None
    """This slot's effective ceiling (its `max_iter=`/`max_calls=` within the run's); the meters show it."""
    kind: Literal["slot_started"] = "slot_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenDelta(DeltaAliases):
    """A piece of streamed answer text (free-text slots only)."""

    run_id: str
    slot: str
    text: str
    round: int = 1
    """1-based model request number within the slot."""
    kind: Literal["token_delta"] = "token_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta(DeltaAliases):
    """A piece of the model's thinking, where the model returns it."""

    run_id: str
    slot: str
    text: str
    round: int = 1
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotRetracted(SlotKey):
    """Text already streamed for this round no longer counts as the answer; consumers drop it."""

    run_id: str
    slot: str
    reason: RetractReason
    text: str = ""
    """The retracted text, kept as narration."""
    round: int = 1
    kind: Literal["slot_retracted"] = "slot_retracted"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted(ToolStartedAliases):
    """The model called a tool and the call is about to run."""

    run_id: str
    slot: str
    call_id: str
    tool_name: str
    args: dict[str, Any] = field(default_factory=dict)
    round: int = 1
    server: str | None = None
    """The MCP server the tool comes from (`None` for any other tool; left off the wire then)."""
    kind: Literal["tool_started"] = "tool_started"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCompleted(ToolCompletedAliases):
    """A tool call finished; `result` is what the model reads (an error string when `ok` is False)."""

    run_id: str
    slot: str
    call_id: str
    tool_name: str
    ok: bool = True
    result: str = ""
    error: str | None = None
    was_cached: bool = False
    elapsed_ms: float = 0.0
    round: int = 1
    kind: Literal["tool_completed"] = "tool_completed"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested:
    """A tool call waits for a person (or the `approve=` callback) to allow it."""

    run_id: str
    slot: str
    call_id: str
    tool_name: str
    args: dict[str, Any] = field(default_factory=dict)
    server: str | None = None
    """The MCP server the tool comes from, as `ToolStarted.server` (left off the wire when `None`)."""
    kind: Literal["approval_requested"] = "approval_requested"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalResolved:
    """The approval wait ended; a denial reason reaches the model as the tool result."""

    run_id: str
    slot: str
    call_id: str
    approved: bool
    reason: str | None = None
    kind: Literal["approval_resolved"] = "approval_resolved"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsListed:
    """Tools a slot's toolsets listed when the slot started (an MCP server's), described once per slot.

    `RunStarted.tool_schemas` describes the notebook's tools; a toolset's are known only once the slot
    lists them, so the views (the teaching view's signatures, the lesson export) learn them from here.
    """

    run_id: str
    slot: str
    tool_schemas: tuple[dict[str, Any], ...] = ()
    """Each as in `RunStarted.tool_schemas`, plus `server` (the MCP server's name) for an MCP server's tool."""
    kind: Literal["tools_listed"] = "tools_listed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrying:
    """A transient provider failure; the request is retried after `delay_s`."""

    run_id: str
    slot: str | None
    attempt: int
    delay_s: float
    reason: str
    kind: Literal["retrying"] = "retrying"


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdated:
    """Running totals after a model request or tool call."""

    run_id: str
    slot: str | None
    usage: Usage
    """Totals for the whole run so far."""
    kind: Literal["usage_updated"] = "usage_updated"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunWarning:
    """Something the user should know that does not stop the run (a clamped budget, trailing text)."""

    run_id: str
    slot: str | None
    message: str
    kind: Literal["run_warning"] = "run_warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardTripped:
    """A `[[halt:…]]` guard's verdict matched its `when`; the run halts after this event."""

    run_id: str
    slot: str
    reason: str
    kind: Literal["guard_tripped"] = "guard_tripped"


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointReached(CheckpointAliases):
    """A `<checkpoint>`: the conversation restarts; earlier answers stay reachable by name."""

    run_id: str
    name: str | None = None
    slot: str | None = None
    kind: Literal["checkpoint_reached"] = "checkpoint_reached"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotCompleted(SlotKey):
    """A slot produced its value."""

    run_id: str
    slot: str
    value: Any
    text: str = ""
    """The answer text as shown (for typed slots, the value rendered as JSON)."""
    kind: Literal["slot_completed"] = "slot_completed"


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotFailed:
    """A slot ended without a value: stopped, out of budget, or an error."""

    run_id: str
    slot: str
    status: RunStatus
    error: str
    partial: str = ""
    """Answer text streamed before the slot ended (kept, marked stopped)."""
    kind: Literal["slot_failed"] = "slot_failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessingComplete:
    """The single terminal event of every run."""

    run_id: str
    status: RunStatus
    result: RunResult
    early_termination: bool = False
    slot: str | None = None
    kind: Literal["processing_complete"] = "processing_complete"


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestCompleted:
    """One model request finished: the journal's per-request row (usage of this request alone, latency)."""

    run_id: str
    slot: str | None
    request: int
    """1-based request number within the slot's agent run (compaction summaries count on their own)."""
    usage: Usage
    """This request only: `requests=1`, its tokens and cost (tool calls are counted in `UsageUpdated`)."""
    latency_ms: float = 0.0
    """From sending the request to the end of the (streamed) response."""
    model: str = ""
    purpose: Literal["answer", "compaction"] = "answer"
    """`compaction`: the request that wrote a summary of older turns."""
    ended: Literal["completed", "stopped", "failed"] = "completed"
    """`stopped`/`failed`: the request was cut off (its tokens, if any, are not known)."""
    kind: Literal["request_completed"] = "request_completed"


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextUpdated:
    """The context gauge after a request: tokens in use against the model's window."""

    run_id: str
    slot: str | None
    used_tokens: int
    """Input + output tokens of the latest request as the provider reported them (estimated if it did not)."""
    window: int
    """The model's context window (known table, `context_window=`, or a nominal one offline)."""
    fraction: float
    """`used_tokens / window`, rounded to 4 places; compaction starts above its threshold."""
    request: int = 1
    window_known: bool = True
    """False when `window` is only assumed (no table knows the model, no `context_window=`): views show the
    tokens in use and "window unknown", not a fraction of a window nobody knows."""
    kind: Literal["context_updated"] = "context_updated"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResumed:
    """A stopped run goes on (right after this segment's `RunStarted`): kept slots are not run again."""

    run_id: str
    segment: int
    """2 for the first resume, 3 for the next…"""
    kept: tuple[str, ...] = ()
    """Slots whose values were kept from earlier segments."""
    restarting: str | None = None
    """The slot that was stopped and starts again (its finished tool rounds are kept, its partial text is not)."""
    slot: str | None = None
    forked_from: str | None = None
    """A fork (`RunResult.fork`): the run it was forked from; its rounds up to `fork_round` are kept."""
    fork_round: int | None = None
    """A fork: the last round of `restarting` kept from the original (0: none, the slot is asked again)."""
    edited: tuple[str, ...] = ()
    """A fork: what was changed at the fork point (`lookup (c2)` for a tool result, `message`)."""
    kind: Literal["run_resumed"] = "run_resumed"


Event: TypeAlias = (
    RunStarted
    | SlotStarted
    | TokenDelta
    | ThinkingDelta
    | SlotRetracted
    | ToolStarted
    | ToolCompleted
    | ApprovalRequested
    | ApprovalResolved
    | ToolsListed
    | Retrying
    | UsageUpdated
    | RunWarning
    | GuardTripped
    | CheckpointReached
    | SlotCompleted
    | SlotFailed
    | ProcessingComplete
    | RequestCompleted
    | ContextUpdated
    | CompactionStarted
    | CompactionFinished
    | RunResumed
    | ModelRequestSent
    | ModelResponseReceived
    | HttpExchange
    | MediaAdded
    | StepPaused
    | StepResumed
    | FaultInjected
    | PredictionMade
)
"""Every event a run can yield."""


faster_init(SlotInfo, *get_args(Event))  # ~12 per batch row: fields set through their slots (`formats/frozen.py`)
