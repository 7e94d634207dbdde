"""Decorators that mark a notebook function as a tool and set its policy.

The decorators only attach a `ToolPolicy` to the callable and return the *same* callable, so the
function keeps working when called directly in the notebook. The engine reads the policy when it
builds the run's toolset; an undecorated function is never exposed implicitly by the magic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar, overload

from .errors import ToolDefinitionError

F = TypeVar("F", bound=Callable[..., Any])

POLICY_ATTR = "__agentcell_tool__"
"""Attribute under which the policy is stored on the decorated callable."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolPolicy:
    """How the engine may call one tool."""

    readonly: bool = False
    """Side-effect free: may run beside a pending guard without waiting for its verdict."""
    approve: bool = False
    """Each call waits for a person (or the `approve=` callback) to allow it."""
    timeout: float | None = None
    """Seconds after which the call is abandoned and the model reads a `TimeoutError` string."""
    name: str | None = None
    """The name the model sees; defaults to the function's `__name__`."""
    sequential: bool = False
    """Never run concurrently with other calls of the same round."""


def policy_of(fn: object) -> ToolPolicy | None:
    """The policy a decorator attached to `fn`, or `None` for an undecorated callable."""
    policy = getattr(fn, POLICY_ATTR, None)
    return policy if isinstance(policy, ToolPolicy) else None


def _attach(fn: F, policy: ToolPolicy) -> F:
    try:
        setattr(fn, POLICY_ATTR, policy)
    except (AttributeError, TypeError) as exc:
        # Bound methods and builtins refuse new attributes; a plain function or lambda does not.
        raise ToolDefinitionError(
            f"cannot mark {fn!r} as a tool: it does not accept attributes; wrap it in a plain function"
        ) from exc
    return fn


def readonly(fn: F) -> F:
    """Mark `fn` as a side-effect free tool (it may run while a guard is still deciding)."""
    return _attach(fn, replace(policy_of(fn) or ToolPolicy(), readonly=True))


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    *, approve: bool = False, timeout: float | None = None, name: str | None = None, sequential: bool = False
) -> Callable[[F], F]: ...
def tool(
    fn: F | None = None,
    /,
    *,
    approve: bool = False,
    timeout: float | None = None,
    name: str | None = None,
    sequential: bool = False,
) -> F | Callable[[F], F]:
    """Mark a callable as a tool, optionally with a policy; usable as `@tool` or `@tool(...)`.

    Args:
        fn: The callable, when used without parentheses.
        approve: Pause at each call until it is approved (widget buttons or the `approve=` callback).
        timeout: Abandon the call after this many seconds; the model reads a `TimeoutError` string.
        name: Expose the tool under this name instead of `fn.__name__`.
        sequential: Run this tool's calls one at a time, never beside other calls of the same round.
    """
    if timeout is not None and timeout <= 0:
        raise ToolDefinitionError(f"tool timeout must be a positive number of seconds, got {timeout!r}")

    def decorate(target: F) -> F:
        base = policy_of(target) or ToolPolicy()
        policy = replace(base, approve=approve, timeout=timeout, name=name, sequential=sequential)
        return _attach(target, policy)

    return decorate if fn is None else decorate(fn)
