"""A context variable set for the length of a `with` block: the engine's per-slot scopes.

`contextlib.contextmanager` would do, but a slot run enters two of these, and a generator's context manager
costs several calls more each time (a batch row is one slot run). Subclasses name what they set.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Generic, TypeVar

T = TypeVar("T")


class ScopedVar(Generic[T]):
    """`with ScopedVar(var, value):` — `var` holds `value` inside the block, and what it held before after it."""

    __slots__ = ("_token", "_value", "_var")

    def __init__(self, var: ContextVar[T], value: T) -> None:
        self._var = var
        self._value = value
        self._token: Token[T] | None = None

    def __enter__(self) -> None:
        self._token = self._var.set(self._value)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            self._var.reset(self._token)
