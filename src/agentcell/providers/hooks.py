"""The per-slot context a model wrapper reads: which slot is asking, and where a retry is reported.

The engine sets it around each slot's agent run (`request_scope`); pydantic-ai copies the context into
the tasks it starts, so `RetryingModel` and the cassette models see it during the slot's requests.
Outside the engine (a pydantic-ai `Agent` of your own) there is no scope: retries still happen, silently,
and a cassette files requests under slot `"_"`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass

from ..formats.frozen import faster_init


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


class request_scope:  # lower case: used as a function, `with request_scope(slot):`
    """Mark model requests made inside as `slot`'s, reporting each retry to `on_retry`.

    A class, not `@contextmanager`: entered once per slot run, and a generator's context manager costs
    several calls more."""

    __slots__ = ("_scope", "_token")

    def __init__(self, slot: str | None, on_retry: OnRetry | None = None) -> None:
        self._scope = RequestScope(slot=slot, on_retry=on_retry)
        self._token: Token[RequestScope | None] | None = None

    def __enter__(self) -> None:
        self._token = _scope.set(self._scope)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _scope.reset(self._token)


faster_init(RequestScope)  # one per slot run (`formats/frozen.py`)
