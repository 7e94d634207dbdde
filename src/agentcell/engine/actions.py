"""Running `[[@name:var|options]]`: find the action, bind its options, call it, report it.

An action runs when the run reaches it, with no model call. A notebook function decorated `@action`
(found in the context by its name) wins over a built-in of the same name. Values without a key fill
the parameters in order (a parameter named `context` is skipped: it receives a read-only view of the
context); `key=value` binds by name; values are coerced to the parameters' annotations
(`"7"` → `7`). Coroutine functions are awaited on the run's loop; plain functions run in a worker
thread, so the kernel stays live and Stop works (a stopped thread is abandoned, its late result
dropped). An action not marked read-only waits for pending guards first.

The widget shows an action as a slot with one call card: the action's name, its arguments, its
result and its time (`ToolStarted`/`ToolCompleted` with `call_id="action"`). An action that raises
ends the run with an error naming the action and its line.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..actions import ActionPolicy, Role, action_policy
from ..events import SlotCompleted, SlotFailed, SlotStarted, ToolCompleted, ToolStarted
from ..template.program import RenderedSlot, SlotSpec, Turn
from .builtins import BUILTINS, Break
from .slot import answer_text
from .state import RunState, SlotEnded


class BreakRun(Exception):
    """`[[@break]]` ended the run early (a completed run; the message says where)."""


class ActionError(Exception):
    """An action could not be called or raised; the message names the action and its line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionOutcome:
    value: Any
    turns: tuple[Turn, ...]
    """What the result adds to the conversation after the text above the action."""
    stop: str | None = None
    """Set by `[[@break]]`: why the run ends here."""

    def stop_if_break(self) -> None:
        if self.stop is not None:
            raise BreakRun(self.stop)


async def run_action(
    state: RunState, spec: SlotSpec, key: str, index: int, rendered: RenderedSlot, context: Mapping[str, Any]
) -> ActionOutcome:
    """Run the action of `spec` and report it; raise `SlotEnded` when it fails."""
    name = spec.action or spec.name
    where = f"[[@{name}]] at line {spec.line}"
    state.emit(SlotStarted(run_id=state.run_id, slot=key, slot_type=spec.type_label, index=index))
    arguments = rendered.options.arguments
    shown = {(k if k is not None else f"#{i + 1}"): _shown(v) for i, (k, v) in enumerate(arguments)}
    state.emit(ToolStarted(run_id=state.run_id, slot=key, call_id="action", tool_name=f"@{name}", args=shown))
    started = time.perf_counter()
    try:
        function, policy = find_action(name, context)
        if not policy.readonly:
            await state.guards.join()
        value = await call(function, arguments, context)
    except asyncio.CancelledError:
        _report(state, key, name, started, error="stopped")
        state.emit(SlotFailed(run_id=state.run_id, slot=key, status="stopped", error="stopped"))
        raise
    except Exception as exc:  # the action is the user's code: any failure ends the run, named
        problem = str(exc) if isinstance(exc, ActionError) else f"raised {type(exc).__name__}: {exc}"
        message = f"{where} {'failed: ' if isinstance(exc, ActionError) else ''}{problem}"
        _report(state, key, name, started, error=message)
        state.emit(SlotFailed(run_id=state.run_id, slot=key, status="failed", error=message))
        raise SlotEnded("failed", message) from exc
    stop = None
    if isinstance(value, Break):
        stop, value = f"{where} ended the run; the slots after it did not run", value.value
    text = answer_text(value)
    _report(state, key, name, started, result=text)
    state.emit(SlotCompleted(run_id=state.run_id, slot=key, value=value, text=text))
    return ActionOutcome(value=value, turns=result_turns(value, text, policy.role), stop=stop)


def _report(
    state: RunState, key: str, name: str, started: float, *, result: str = "", error: str | None = None
) -> None:
    state.emit(
        ToolCompleted(
            run_id=state.run_id,
            slot=key,
            call_id="action",
            tool_name=f"@{name}",
            ok=error is None,
            result=result if error is None else error,
            error=error,
            elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
        )
    )


def _shown(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def find_action(name: str, context: Mapping[str, Any]) -> tuple[Callable[..., Any], ActionPolicy]:
    """The notebook function decorated `@action` named `name`, else the built-in."""
    for value in context.values():
        policy = action_policy(value)
        if policy is not None and (policy.name or getattr(value, "__name__", None)) == name:
            return value, policy
    if name in BUILTINS:
        return BUILTINS[name]
    found = context.get(name)
    if callable(found):
        raise ActionError(f"{name}() is not an action: decorate it with @action (from agentcell import action)")
    raise ActionError(f"no action named {name!r}")


Arguments = tuple[tuple[str | None, Any], ...]


async def call(function: Callable[..., Any], arguments: Arguments, context: Mapping[str, Any]) -> Any:
    """Bind `arguments` to `function`'s parameters, coerce them, and call it (sync ones in a thread)."""
    kwargs = bind(function, arguments, context)
    if inspect.iscoroutinefunction(function):
        return await function(**kwargs)
    result = await asyncio.to_thread(function, **kwargs)
    return await result if inspect.isawaitable(result) else result


def bind(function: Callable[..., Any], arguments: Arguments, context: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments `function` is called with; raise `ActionError` naming what does not fit."""
    signature = inspect.signature(function)
    params = signature.parameters
    positional = [
        p for p in params.values()
        if p.name != "context" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]  # fmt: skip
    open_keys = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    values = [value for key, value in arguments if key is None]
    if len(values) > len(positional):
        names = ", ".join(p.name for p in positional) or "none"
        raise ActionError(f"takes {len(positional)} values without a key ({names}), got {len(values)}")
    for param, value in zip(positional, values, strict=False):
        kwargs[param.name] = value
    for key, value in arguments:
        if key is None:
            continue
        if (key not in params and not open_keys) or key == "context":
            takes = ", ".join(p for p in params if p != "context")
            raise ActionError(f"has no parameter {key!r} (it takes: {takes})")
        if key in kwargs:
            raise ActionError(f"gets {key!r} twice")
        kwargs[key] = value
    if "context" in params:
        kwargs["context"] = MappingProxyType(dict(context))
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    missing = [
        p.name for p in params.values() if p.default is p.empty and p.kind not in variadic and p.name not in kwargs
    ]
    if missing:
        raise ActionError(f"needs {', '.join(repr(m) for m in missing)}")
    return {name: _coerce(params.get(name), value) for name, value in kwargs.items()}


def _coerce(param: inspect.Parameter | None, value: Any) -> Any:
    if param is None or param.annotation is param.empty or param.name == "context":
        return value
    try:
        return TypeAdapter(param.annotation).validate_python(value)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise ActionError(f"option {param.name}={value!r} does not fit {_annotation(param)}: {problem}") from None
    except (TypeError, NameError):  # an annotation pydantic cannot use (a string it cannot resolve)
        return value


def _annotation(param: inspect.Parameter) -> str:
    annotation = param.annotation
    return getattr(annotation, "__name__", None) or str(annotation)


def result_turns(value: Any, text: str, role: Role) -> tuple[Turn, ...]:
    """The turns an action's result adds: a list of `{role, content}` messages turn by turn, else one."""
    if role == "none":
        return ()
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        turns = [Turn(role="assistant" if m["role"] == "assistant" else "user", text=str(m.get("content", "")))
                 for m in value]  # fmt: skip
        return tuple(turn for turn in turns if turn.text)
    return (Turn(role=role, text=text),) if text else ()
