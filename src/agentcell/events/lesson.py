"""The events of lesson mode: a step pause and its end, an injected fault, a prediction revealed.

Teaching payloads (kept as items of their round by both reducers, drawn by the teaching view, the
timeline and the lesson export). They are part of the `agentcell.events.Event` union and importable from
`agentcell.events`; they live in their own module to keep `run.py` within the module size limit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

StepBefore = Literal["request", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StepPaused:
    """A stepped run (`step=True`) waits before a model request or a tool call; `summary` says what is next.

    Nothing is in flight while it waits: no provider connection is open and no tool runs."""

    run_id: str
    slot: str
    round: int
    number: int
    """The pause's number in the run (1, 2, …); its `StepResumed` carries the same."""
    before: StepBefore
    summary: str
    """"paused before request 2: 4 messages, 1 tool offered" / "paused before lookup(code='PSYC605')"."""
    messages: int = 0
    """How many messages the request about to be sent holds (`before="request"`)."""
    tools: tuple[str, ...] = ()
    """The tools the request offers (`before="request"`)."""
    tool_name: str | None = None
    call_id: str | None = None
    args: Any = None
    """The call's arguments (`before="tool"`)."""
    predict: bool = False
    """The run asks for a prediction at this pause (`predict=True`, before a request)."""
    kind: Literal["step_paused"] = "step_paused"


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResumed:
    """The pause `number` ended: `next` (one step), `go` (run to the end) or `stopped`."""

    run_id: str
    slot: str
    round: int
    number: int
    how: Literal["next", "go", "stopped"] = "next"
    waited_ms: float = 0.0
    kind: Literal["step_resumed"] = "step_resumed"


@dataclass(frozen=True, slots=True, kw_only=True)
class FaultInjected:
    """An injected fault fired (`inject=`): what follows it (a retry, a tool error) is its doing, not the world's."""

    run_id: str
    slot: str | None
    round: int = 0
    target: str
    """`model` or the tool's name."""
    fault: str
    """`error`, `timeout`, `wrong-type`, `slow`, `429`, `500`, `drop`."""
    spec: str
    call_id: str | None = None
    kind: Literal["fault_injected"] = "fault_injected"


@dataclass(frozen=True, slots=True, kw_only=True)
class PredictionMade:
    """A guess made at a pause (`predict=True`) and, once the model answered, what it did and whether it matched."""

    run_id: str
    slot: str
    round: int
    guess: dict[str, Any] = field(default_factory=dict)
    """`{"does": "answer" | "tool" | "both", "tool": name or None}`."""
    actual: dict[str, Any] = field(default_factory=dict)
    """The same shape, read from the response."""
    right: bool = False
    kind: Literal["prediction"] = "prediction"
