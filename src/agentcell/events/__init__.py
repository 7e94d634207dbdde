"""What a run emits: one frozen dataclass per event kind, with a `kind` tag (`run.py`), the teaching view's
payloads (`teaching.py`), struckdown's attribute names (`aliases.py`), and each event's JSON form (`json.py`).

`agentcell.events` re-exports the event classes, as it did when it was one module. `json.py` is not
imported here: the events stay plain values a light import can read.
"""

from .lesson import (
    FaultInjected as FaultInjected,
)
from .lesson import (
    PredictionMade as PredictionMade,
)
from .lesson import (
    StepPaused as StepPaused,
)
from .lesson import (
    StepResumed as StepResumed,
)
from .run import (
    ApprovalRequested as ApprovalRequested,
)
from .run import (
    ApprovalResolved as ApprovalResolved,
)
from .run import (
    CheckpointReached as CheckpointReached,
)
from .run import (
    CompactionFinished as CompactionFinished,
)
from .run import (
    CompactionStarted as CompactionStarted,
)
from .run import (
    ContextUpdated as ContextUpdated,
)
from .run import (
    Event as Event,
)
from .run import (
    GuardTripped as GuardTripped,
)
from .run import (
    HttpExchange as HttpExchange,
)
from .run import (
    Limits as Limits,
)
from .run import (
    MediaAdded as MediaAdded,
)
from .run import (
    ModelRequestSent as ModelRequestSent,
)
from .run import (
    ModelResponseReceived as ModelResponseReceived,
)
from .run import (
    ProcessingComplete as ProcessingComplete,
)
from .run import (
    RequestCompleted as RequestCompleted,
)
from .run import (
    RetractReason as RetractReason,
)
from .run import (
    Retrying as Retrying,
)
from .run import (
    RunResumed as RunResumed,
)
from .run import (
    RunStarted as RunStarted,
)
from .run import (
    RunStatus as RunStatus,
)
from .run import (
    RunWarning as RunWarning,
)
from .run import (
    SlotCompleted as SlotCompleted,
)
from .run import (
    SlotFailed as SlotFailed,
)
from .run import (
    SlotInfo as SlotInfo,
)
from .run import (
    SlotRetracted as SlotRetracted,
)
from .run import (
    SlotStarted as SlotStarted,
)
from .run import (
    ThinkingDelta as ThinkingDelta,
)
from .run import (
    TokenDelta as TokenDelta,
)
from .run import (
    ToolCompleted as ToolCompleted,
)
from .run import (
    ToolsListed as ToolsListed,
)
from .run import (
    ToolStarted as ToolStarted,
)
from .run import (
    Usage as Usage,
)
from .run import (
    UsageUpdated as UsageUpdated,
)
