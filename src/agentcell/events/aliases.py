"""struckdown's spellings of agentcell's event fields: read-only properties, and the one list of them.

Code written for `struckdown.incremental` reads `event.delta`, `event.arguments`, `event.output` and
`event.slot_key`; agentcell's events call those `text`, `args`, `result` and `slot`. The mixins below
give agentcell's own event classes (`run.py` lists them as bases) properties under struckdown's
names that read the same values, so one event stream serves both spellings and an event is never
copied or converted. `ALIASES` lists every alias once (struckdown's spelling → agentcell's);
`agentcell.incremental` exports the class names and `tests/struckdown/test_incremental.py` checks each
entry against the classes, so an alias cannot exist outside the list.

The mixins hold no state (`__slots__ = ()`), so the slotted event dataclasses stay slotted.
"""

from __future__ import annotations

from typing import Any, Protocol

ALIASES: tuple[tuple[str, str], ...] = (
    ("SlotStreamStart", "SlotStarted"),
    ("SlotStreamStart.slot_key", "SlotStarted.slot"),
    ("TokenDelta.delta", "TokenDelta.text"),
    ("TokenDelta.slot_key", "TokenDelta.slot"),
    ("ThinkingDelta.delta", "ThinkingDelta.text"),
    ("ThinkingDelta.slot_key", "ThinkingDelta.slot"),
    ("ToolStarted.arguments", "ToolStarted.args"),
    ("ToolStarted.slot_key", "ToolStarted.slot"),
    ("ToolCompleted.output", "ToolCompleted.result"),
    ("ToolCompleted.was_cached", "ToolCompleted.was_cached"),
    ("ToolCompleted.slot_key", "ToolCompleted.slot"),
    ("SlotRetracted", "SlotRetracted"),
    ("SlotRetracted.slot_key", "SlotRetracted.slot"),
    ("SlotCompleted.slot_key", "SlotCompleted.slot"),
    ("CheckpointReached.segment_name", "CheckpointReached.name"),
    ("ProcessingComplete.early_termination", "ProcessingComplete.early_termination"),
)
"""struckdown spelling → agentcell spelling, `Class` or `Class.attribute`; identical pairs are names both share."""


class _HasSlot(Protocol):
    @property
    def slot(self) -> str: ...


class _HasText(Protocol):
    @property
    def text(self) -> str: ...


class _HasArgs(Protocol):
    @property
    def args(self) -> dict[str, Any]: ...


class _HasResult(Protocol):
    @property
    def result(self) -> str: ...


class _HasName(Protocol):
    @property
    def name(self) -> str | None: ...


class SlotKey:
    """`slot_key`: struckdown's name for the slot an event belongs to."""

    __slots__ = ()

    @property
    def slot_key(self: _HasSlot) -> str:
        """The slot's name (agentcell: `slot`)."""
        return self.slot


class DeltaAliases(SlotKey):
    """`delta`: struckdown's name for a streamed piece of text."""

    __slots__ = ()

    @property
    def delta(self: _HasText) -> str:
        """This piece of text (agentcell: `text`)."""
        return self.text


class ToolStartedAliases(SlotKey):
    """`arguments`: struckdown's name for a tool call's arguments."""

    __slots__ = ()

    @property
    def arguments(self: _HasArgs) -> dict[str, Any]:
        """The validated arguments the tool is called with (agentcell: `args`)."""
        return self.args


class ToolCompletedAliases(SlotKey):
    """`output`: struckdown's name for what a tool call returned."""

    __slots__ = ()

    @property
    def output(self: _HasResult) -> str:
        """What the model reads back: the tool's return value as text, or an error string (agentcell: `result`)."""
        return self.result


class CheckpointAliases:
    """`segment_name`: struckdown's name for a checkpoint's name."""

    __slots__ = ()

    @property
    def segment_name(self: _HasName) -> str | None:
        """The checkpoint's name, `None` when it has none (agentcell: `name`)."""
        return self.name
