"""One model of a run's transcript, built from its events; every view and summary reads it.

`Transcript` reduces wire events (the JSON the browser gets) into slots → rounds → items with
retractions applied, usage per slot and per run, and status. It is a port of the widget's
`js/src/state.js`, pinned to it by golden fixtures: both produce the same canonical JSON.
"""

from .items import (
    ApprovalItem,
    CheckpointItem,
    CompactionItem,
    ContextGauge,
    GuardItem,
    Item,
    ItemType,
    NarrationItem,
    PayloadItem,
    RequestItem,
    ResumedItem,
    RetryItem,
    ThinkingItem,
    ToolItem,
    WarningItem,
)
from .model import Round, Slot, is_text_type
from .pieces import Pieces
from .state import Transcript

__all__ = [
    "ApprovalItem", "CheckpointItem", "CompactionItem", "ContextGauge", "GuardItem", "Item", "ItemType",
    "NarrationItem", "PayloadItem", "Pieces", "RequestItem", "ResumedItem", "RetryItem", "Round", "Slot",
    "ThinkingItem", "ToolItem", "Transcript", "WarningItem", "is_text_type",
]
