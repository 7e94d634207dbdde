"""The per-slot context a model wrapper reads: which slot is asking, and where a retry is reported.

The engine sets it around each slot's agent run (`request_scope`); pydantic-ai copies the context into
the tasks it starts, so `RetryingModel` and the cassette models see it during the slot's requests.
Outside the engine (a pydantic-ai `Agent` of your own) there is no scope: retries still happen, silently,
and a cassette files requests under slot `"_"`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from ..formats.frozen import faster_init
from ..formats.scoped import ScopedVar


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryNotice:
    """One retry about to wait: the 1-based retry number, the wait, and a short reason (`"429"`)."""

    attempt: int
    delay_s: float
    reason: str


OnRetry = Callable[[RetryNotice], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestScope:
    slot: str | None = None
    on_retry: OnRetry | None = None


_scope: ContextVar[RequestScope | None] = ContextVar("agentcell_request_scope", default=None)


def current_scope() -> RequestScope:
    """The scope of the slot making the current request (an empty scope outside the engine)."""
    return _scope.get() or RequestScope()


class request_scope(ScopedVar[RequestScope | None]):  # lower case: used as a function, `with request_scope(slot):`
    """Mark model requests made inside as `slot`'s, reporting each retry to `on_retry`."""

    __slots__ = ()

    def __init__(self, slot: str | None, on_retry: OnRetry | None = None) -> None:
        super().__init__(_scope, RequestScope(slot=slot, on_retry=on_retry))


faster_init(RequestScope)  # one per slot run (`formats/frozen.py`)
