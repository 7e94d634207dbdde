"""What every part of one run shares: its id, the event sink, usage totals, guards and policies.

One `RunState` exists per run and is touched only from the run's event loop, so nothing here needs a
lock. Sync tools run in worker threads but never see this object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import RunUsage, UsageLimits

from ..events import Event, RunStatus, RunWarning, ThinkingDelta, TokenDelta, Usage, UsageUpdated
from ..options import NO_DEPS as NO_DEPS
from ..options import ApprovalDecision as ApprovalDecision
from ..options import ApproveCallback as ApproveCallback
from ..providers.known_secrets import KnownSecrets
from ..providers.models import ResolvedModel
from ..usage import OutputMode
from .agents import SlotAgents
from .coalesce import TextCoalescer
from .guard import Guards
from .output_modes import ServerFacts
from .temporal import reference_time
from .toolbox import ToolRegistry

if TYPE_CHECKING:
    from ..journal import Journal
    from .compaction import ContextKeeper
    from .lesson import LessonControls

Emit = Callable[[Event], None]
EmitText = Callable[[type[TokenDelta] | type[ThinkingDelta], str, str, int], None]
"""`(kind, slot, text, round)`: one piece of streamed text, without an event object per token (`coalesce.py`)."""


class SlotEnded(Exception):
    """A slot ended without a value for a reason that ends the run (budget, error); already reported."""

    def __init__(self, status: RunStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def to_usage(usage: RunUsage) -> Usage:
    """pydantic-ai's usage as the event value (cost as a float, `None` when unknown)."""
    return Usage(
        requests=usage.requests,
        tool_calls=usage.tool_calls,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost=None if usage.cost is None else float(usage.cost),
    )


class UsageBook:
    """Run totals, summed over slot runs that may be live at the same time (a guard beside a slot)."""

    def __init__(self, run_id: str, emit: Emit, *, base: Usage | None = None) -> None:
        self._run_id = run_id
        self._emit = emit
        self._by_slot: dict[str, Usage] = {}
        self._base = base or Usage()
        """What earlier segments of a resumed run spent."""
        self._reported = self._base
        self._estimated: dict[str, Usage] = {}
        """Per slot: what was counted here (`add`): estimates, and requests pydantic-ai never counted."""

    @property
    def total(self) -> Usage:
        total = self._base
        for usage in self._by_slot.values():
            total = total + usage
        for usage in self._estimated.values():
            total = total + usage
        return total

    def add(self, slot: str, spent: Usage) -> None:
        """Add what pydantic-ai does not count: a local estimate for a response whose provider reported no usage
        (`requests.py`), a request whose response the slot set aside (`slot.py`)."""
        self._estimated[slot] = self._estimated.get(slot, Usage()) + spent
        self._announce(slot)

    @property
    def reported(self) -> Usage:
        """The total as last announced in a `UsageUpdated` event: what the run's transcript shows."""
        return self._reported

    def carry(self, slot: str) -> None:
        """`slot` starts its agent run again (`slot.py`): what it spent so far stays counted, under a key of its own."""
        spent = self._by_slot.pop(slot, None)
        if spent is not None:
            again = sum(1 for key in self._by_slot if key.startswith(f"{slot}#again"))
            self._by_slot[f"{slot}#again{again + 1}"] = spent

    def update(self, slot: str, usage: RunUsage) -> None:
        """Record `slot`'s usage so far; emit `UsageUpdated` when the run total changed."""
        new = to_usage(usage)
        if self._by_slot.get(slot) == new:
            return  # the total is the one announced last (every change to it is announced)
        self._by_slot[slot] = new
        self._announce(slot)

    def _announce(self, slot: str) -> None:
        total = self.total
        if total != self._reported:
            self._reported = total
            self._emit(UsageUpdated(run_id=self._run_id, slot=slot, usage=total))


@dataclass(eq=False, kw_only=True)
class RunState:
    """Shared by the runner, the slot runs, the tool wrapper and the approval handler."""

    run_id: str
    emit: Emit
    model: ResolvedModel
    ceiling: UsageLimits
    registry: ToolRegistry
    guards: Guards
    toolsets: tuple[AbstractToolset[Any], ...] = ()
    """The run's `toolsets=`: pydantic-ai toolsets every slot with tools offers beside the registry's tools."""
    approve_writes: bool = False
    """Ask before every call not marked readonly (the registry's tools are marked when built; see `toolbox.py`)."""
    usage: UsageBook
    deps: Any = None
    deps_type: type[Any] = NO_DEPS
    approve: ApproveCallback | None = None
    warnings: list[str] = field(default_factory=list)
    transcript: dict[str, tuple[ModelMessage, ...]] = field(default_factory=dict)
    """Slot name → the messages its agent run added (kept on failure too)."""
    partial: dict[str, str] = field(default_factory=dict)
    """Slot name → answer text shown before the slot was stopped or failed (retracted or not)."""
    context: ContextKeeper | None = None
    """The context gauge and compaction policy (`None`: no gauge, no compaction)."""
    journal: Journal | None = None
    """Where the run's rows are appended (`None`: not journaled)."""
    reference_time: datetime = field(default_factory=reference_time)
    """What "now" means for the run's temporal slots (fixed when the run starts; see `temporal.py`)."""
    emit_text: EmitText | None = None
    """Where streamed text goes, merged before it becomes events (`coalesce.py`); `None`: `emit` per piece."""
    coalescer: TextCoalescer | None = None
    """What `emit_text` feeds, for a slot to watch its merges (`ShownText` keeps the merged strings)."""
    agents: SlotAgents = field(default_factory=SlotAgents)
    """The slots' pydantic-ai agents, shared with every run of the same prepared setup (`agents.py`)."""
    cost_limit: float | None = None
    """`RunOptions.cost_limit`: no request is sent once `spent` reached it (`requests.py`)."""
    spent: float = 0.0
    """The known cost of the run's answered requests so far, in USD (unpriced requests add nothing)."""
    secrets: KnownSecrets = field(default_factory=KnownSecrets)
    """The credentials of the run's models (each slot adds its model's), masked in the run's own text:
    the responses' parts (`slotmodel.py`), the answers, the streamed deltas (`setup.py`'s sink)."""
    media_shown: set[str] = field(default_factory=set)
    """Digests of the images whose thumbnail the run has sent (`MediaAdded`: each travels once)."""
    describe_media: Model | None = None
    """Describes the media a slot's model cannot read (`RunOptions.describe_media`); `None`: refuse them."""
    lesson: LessonControls | None = None
    """Lesson mode (`step`, `predict`, `inject`): the step gate, the guesses and the tool faults (`lesson.py`)."""

    output_mode: OutputMode = "auto"
    """How the run's typed slots ask for their value (`RunOptions.output_mode`; a slot's own option wins)."""
    server: ServerFacts = field(default_factory=ServerFacts)
    """What the run learned about its servers as it went (`output_modes.py`): which answer a required output
    tool call with nothing, which send tool rounds only without streaming."""

    def warn(self, slot: str | None, message: str) -> None:
        """Show a warning now and keep it for the result."""
        self.warnings.append(message)
        self.emit(RunWarning(run_id=self.run_id, slot=slot, message=message))
