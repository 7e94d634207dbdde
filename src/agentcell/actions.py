"""`@action`: mark a notebook function as an action a template runs with `[[@name:var|options]]`.

An action runs when the run reaches it, in order, with no model call: its options become its
arguments (values without a key fill the parameters in order; `key=value` binds by name; an unquoted
word is a variable from the context, a quoted one a string), and its return value becomes `{{ var }}`
for what follows. Like `@tool`, the decorator only attaches a policy and returns the same function.
The built-in actions (`BUILTIN_ACTIONS`) are implemented by the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from .errors import ToolDefinitionError

F = TypeVar("F", bound=Callable[..., Any])

ACTION_ATTR = "__agentcell_action__"
"""Attribute under which the policy is stored on the decorated function."""

BUILTIN_ACTIONS: tuple[str, ...] = (
    "set", "timestamp", "break", "history", "evidence", "fetch", "markdownify", "search", "noop",
)  # fmt: skip
"""The actions every template can use without defining them."""

Role = Literal["user", "assistant", "none"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionPolicy:
    """How the engine runs one action."""

    name: str | None = None
    """The name templates use (`[[@name…]]`); defaults to the function's `__name__`."""
    role: Role = "user"
    """How the result joins the conversation: a `user` turn (struckdown's default), an `assistant`
    turn, or `none` (only `{{ var }}` sees it)."""
    readonly: bool = True
    """Side-effect free: may run while a guard is still deciding. `readonly=False` waits for guards."""


def action_policy(fn: object) -> ActionPolicy | None:
    """The policy `@action` attached to `fn`, or `None`."""
    policy = getattr(fn, ACTION_ATTR, None)
    return policy if isinstance(policy, ActionPolicy) else None


@overload
def action(fn: F, /) -> F: ...
@overload
def action(*, name: str | None = None, role: Role = "user", readonly: bool = True) -> Callable[[F], F]: ...
def action(
    fn: F | None = None, /, *, name: str | None = None, role: Role = "user", readonly: bool = True
) -> F | Callable[[F], F]:
    """Mark a function as a template action; usable as `@action` or `@action(name=..., role=...)`.

    Args:
        fn: The function, when used without parentheses. Sync functions run in a worker thread.
        name: The name templates use, if not the function's own.
        role: How the result joins the conversation (`user`, `assistant` or `none`).
        readonly: `False` for an action with side effects: it waits for pending guards first.
    """
    policy = ActionPolicy(name=name, role=role, readonly=readonly)

    def mark(target: F) -> F:
        if not callable(target):
            raise ToolDefinitionError(f"@action needs a function, got {target!r}")
        try:
            setattr(target, ACTION_ATTR, policy)
        except (AttributeError, TypeError) as exc:
            raise ToolDefinitionError(f"cannot mark {target!r} as an action: wrap it in a plain function") from exc
        return target

    return mark(fn) if fn is not None else mark
