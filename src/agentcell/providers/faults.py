"""Faults injected on purpose (`--inject SPEC`, `inject=[...]`): a tool that raises, a provider that answers 429.

A class learns the retry and error-feedback paths best by watching them fire. An injected fault goes
through exactly the code a real one does: a model fault is raised *inside* the run's `RetryingModel`
(`FaultyModel` sits between it and the model), so a 429 is retried with the same back-off and a
`Retrying` event; a tool fault happens inside the tool call (`engine/lesson.py`), so the error is fed
back to the model as any tool error. What differs is the label: every message a fault produces says
"injected", so nobody mistakes it for a real failure.

Spec grammar (one fault per spec; `*N` repeats it N times, default once)::

    TOOL=error[:message]   TOOL=timeout   TOOL=wrong-type   TOOL=slow:SECONDS
    model=429[:retry-after]   model=500   model=drop   model=slow:TOKENS_PER_S
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai.exceptions import ModelConnectionError, ModelHTTPError
from pydantic_ai.models import Model, StreamedResponse

from ..errors import AgentcellError
from .around import AroundModel
from .retry import RetryingModel

FaultKind = Literal["error", "timeout", "wrong-type", "slow", "429", "500", "drop"]
TOOL_FAULTS: tuple[FaultKind, ...] = ("error", "timeout", "wrong-type", "slow")
MODEL_FAULTS: tuple[FaultKind, ...] = ("429", "500", "drop", "slow")
INJECTED = "injected"
"""The word every injected fault's messages carry."""

_SPEC = re.compile(r"^(?P<target>[A-Za-z_][\w.\-]*)=(?P<kind>[\w\-]+)(?::(?P<arg>[^*]*))?(?:\*(?P<times>\d+))?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """One injected fault, parsed from its spec."""

    target: str
    """`model`, or the name of a tool."""
    fault: FaultKind
    arg: str | None = None
    """The message of `error`, the retry-after of `429`, the seconds or tokens per second of `slow`."""
    times: int = 1
    """How many times it fires (`*N`)."""
    spec: str = ""
    """As written, for labels."""
    kind: Literal["fault"] = "fault"

    @property
    def number(self) -> float | None:
        """`arg` as a number (`slow`, `429`), `None` when absent."""
        return None if self.arg in (None, "") else float(str(self.arg))


def parse_fault(spec: str) -> Fault:
    """One spec → a `Fault`; raises `AgentcellError` with one sentence naming what is wrong."""
    text = str(spec).strip()
    match = _SPEC.match(text)
    if match is None:
        raise AgentcellError(
            f"--inject {text!r} is not a fault: write TOOL=error[:message], TOOL=timeout, TOOL=wrong-type, "
            "TOOL=slow:SECONDS, model=429[:retry-after], model=500, model=drop or model=slow:TOKENS_PER_S, "
            "optionally followed by *N"
        )
    target, kind, arg, times = match["target"], match["kind"], match["arg"], match["times"]
    allowed = MODEL_FAULTS if target == "model" else TOOL_FAULTS
    if kind not in allowed:
        what = "the model" if target == "model" else f"a tool ({target})"
        raise AgentcellError(f"--inject {text!r}: {what} can be given {', '.join(allowed)}, not {kind!r}")
    fault = Fault(target=target, fault=kind, arg=arg, times=int(times) if times else 1, spec=text)
    if fault.times < 1:
        raise AgentcellError(f"--inject {text!r}: *N must be at least 1")
    if kind == "slow" or (kind == "429" and arg):
        try:
            value = fault.number
        except ValueError:
            value = None
        if value is None or not value > 0 or value == float("inf"):
            raise AgentcellError(f"--inject {text!r}: {kind} needs a positive number after the colon")
    return fault


def parse_faults(specs: Sequence[str] | str | None) -> tuple[Fault, ...]:
    """Every spec of `inject=` (a string is one spec)."""
    if specs is None:
        return ()
    return tuple(parse_fault(s) for s in ([specs] if isinstance(specs, str) else specs))


class FaultBook:
    """How many times each fault may still fire in this run (each spec counts down on its own)."""

    def __init__(self, faults: Sequence[Fault]) -> None:
        self._faults = tuple(faults)
        self._left = [fault.times for fault in self._faults]
        self.on_fire: Callable[[Fault, str | None], None] | None = None
        """Told of each fault as it fires (the engine emits a `FaultInjected` event), with the tool call's id."""

    def take(self, target: str, call_id: str | None = None) -> Fault | None:
        """The next fault due for `target` (and count it), or `None`."""
        for index, fault in enumerate(self._faults):
            if fault.target == target and self._left[index] > 0:
                self._left[index] -= 1
                if self.on_fire is not None:
                    self.on_fire(fault, call_id)
                return fault
        return None

    def has(self, target: str) -> bool:
        return any(fault.target == target for fault in self._faults)

    @property
    def faults(self) -> tuple[Fault, ...]:
        return self._faults


class FaultyModel(AroundModel[Fault | None]):
    """The run's model with its injected faults, wrapped *inside* a `RetryingModel` (see `with_faults`)."""

    def __init__(self, wrapped: Model, book: FaultBook) -> None:
        self.wrapped = wrapped
        self._settings = None
        self._profile = None
        self.book = book

    async def _before(self, *, streamed: bool) -> Fault | None:
        fault = self.book.take("model")
        if fault is not None and fault.fault != "slow" and (fault.fault != "drop" or not streamed):
            raise self._error(fault)  # before any byte: the retry path (a whole response cannot break mid-way)
        return fault

    def _opened(self, ticket: Fault | None, stream: StreamedResponse | None) -> None:
        if ticket is not None and stream is not None:
            _disturb(stream, ticket, self.wrapped.model_name)

    def _error(self, fault: Fault) -> ModelHTTPError:
        name = self.wrapped.model_name
        if fault.fault == "429":
            wait = fault.arg or None
            headers = {"retry-after": wait} if wait else None
            body = {"error": {"message": f"rate limited ({INJECTED}: --inject {fault.spec})"}}
            error = ModelHTTPError(429, name, body, headers=headers, retry_after=None if wait is None else float(wait))
        else:
            body = {"error": {"message": f"internal server error ({INJECTED}: --inject {fault.spec})"}}
            error = ModelHTTPError(500, name, body)
        error.injected = True  # type: ignore[attr-defined]  # `RetryingModel` labels its retry so
        return error


def _disturb(stream: StreamedResponse, fault: Fault, model_name: str) -> None:
    """Slow a stream down, or break it off after its first event (`drop`), where its events are produced."""
    produce = stream._get_event_iterator  # the provider's events, before pydantic-ai's own bookkeeping

    async def slowed() -> AsyncIterator[Any]:
        gap = 1.0 / float(fault.number or 1.0)
        async for event in produce():
            await asyncio.sleep(gap)  # a Stop cancels this wait like any other
            yield event

    async def dropped() -> AsyncIterator[Any]:
        async for event in produce():
            yield event
            break
        error = ModelConnectionError(
            model_name, f"connection lost mid-stream ({INJECTED}: --inject {fault.spec})", phase="read"
        )
        error.injected = True  # type: ignore[attr-defined]
        raise error

    stream._get_event_iterator = slowed if fault.fault == "slow" else dropped  # type: ignore[method-assign]


def with_faults(model: Model, book: FaultBook) -> Model:
    """`model` with `book`'s model faults raised inside its retries: `RetryingModel(FaultyModel(inner))`.

    A model without retries of its own (a local test model) gets them, so an injected 429 is retried as a
    provider's would be."""
    if not book.has("model"):
        return model
    if isinstance(model, RetryingModel):
        return RetryingModel(FaultyModel(model.wrapped, book), policy=model.policy, key_var=model.key_var)
    return RetryingModel(FaultyModel(model, book))
