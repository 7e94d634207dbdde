"""Lesson mode inside a run: step pauses, predictions and injected tool faults.

`step=True` pauses the run before every model request and before every tool call. A pause is an
`await` on a future, like an approval (`approvals.py`): the loop stays free, Stop cancels the wait
like any other, and nothing is in flight meanwhile — the request waits in `SlotRequests.before`,
*before* the model is asked to open its stream, and a tool call waits before it starts. `step()` lets
the run go on to the next pause, `go()` lets it run to its end.

`predict=True` asks, at each pause before a request, what the model will do; the guess (`predict()`)
is compared with the response when it arrives (`reveal`) and kept (`PredictionMade`,
`RunResult.predictions`).

Tool faults (`inject=["lookup=error"]`) are applied here, inside the tool call, so their errors reach
the model through the same path as a real tool's (`calls.py`); model faults are the model's
(`providers/faults.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart

from ..errors import AgentcellError
from ..events import Event
from ..events.lesson import FaultInjected, PredictionMade, StepPaused, StepResumed
from ..providers.faults import INJECTED, Fault, FaultBook
from .tooltask import Outcome

INJECTED_TIMEOUT_S = 0.5
"""The timeout an injected `timeout` fault waits out when the tool has no timeout of its own."""

Does = Literal["answer", "tool", "both"]


class InjectedFault(RuntimeError):
    """What a tool with an injected `error` fault raises (its name says so wherever the error shows)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    """What a paused run is waiting before (`handle.paused`)."""

    number: int
    slot: str
    round: int
    before: Literal["request", "tool"]
    summary: str
    predict: bool = False

    def __str__(self) -> str:
        return self.summary


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """One guess and what the model did (`RunResult.predictions`)."""

    slot: str
    round: int
    guess: Mapping[str, Any]
    actual: Mapping[str, Any]
    right: bool
    kind: Literal["prediction"] = "prediction"

    def as_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "round": self.round, "guess": dict(self.guess), "actual": dict(self.actual),
                "right": self.right}


def _call_text(name: str, args: Any) -> str:
    if isinstance(args, Mapping):
        inner = ", ".join(f"{k}={v!r}" for k, v in args.items())
    else:
        inner = "" if args in (None, "") else repr(args)
    text = f"{name}({inner})"
    return text if len(text) <= 120 else f"{text[:119]}…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class LessonControls:
    """One run's step gate, predictions and tool faults (touched only from the run's loop, but `step`,
    `go` and `predict` may be called from any thread: they hand themselves to the loop)."""

    def __init__(
        self, *, run_id: str, emit: Callable[[Event], None], step: bool, predict: bool, faults: FaultBook | None
    ) -> None:
        self.run_id = run_id
        self._emit = emit
        self.stepping = step or predict  # a guess needs a pause to be made at
        self.predicting = predict
        self.faults = faults
        self.paused: Pause | None = None
        self.predictions: list[Prediction] = []
        self._loop = asyncio.get_running_loop()
        self._gate: asyncio.Future[str] | None = None
        self._reached: list[asyncio.Future[Pause | None]] = []
        """`step()` callers waiting for the next pause (or the end: `None`)."""
        self._count = 0
        self._guess: dict[tuple[str, int], dict[str, Any]] = {}
        self._ended = False
        self._credit = 0
        self._turn = asyncio.Lock()
        self._next_guess: dict[str, Any] | None = None
        """`step()` calls made while the run was not paused: each lets the next pause pass."""
        self._at: tuple[str | None, int] = (None, 0)
        if faults is not None:
            faults.on_fire = self._fired

    # ---- what the engine calls ------------------------------------------------------------------
    async def before_request(self, slot: str, round: int, messages: int, tools: tuple[str, ...]) -> None:
        self._at = (slot, round)  # where a model fault fired (the retries of this request)
        if self._next_guess is not None:  # a guess made before this request's pause (or with no pause: go())
            self._guess[(slot, round)], self._next_guess = self._next_guess, None
        if not self.stepping:
            return
        offered = _plural(len(tools), "tool") + " offered" if tools else "no tools offered"
        summary = f"paused before request {round}: {_plural(messages, 'message')}, {offered}"
        await self._pause(
            StepPaused(run_id=self.run_id, slot=slot, round=round, number=self._count + 1, before="request",
                       summary=summary, messages=messages, tools=tools, predict=self.predicting)
        )

    async def before_tool(self, slot: str, round: int, call_id: str, name: str, args: Any) -> None:
        if not self.stepping:
            return
        summary = f"paused before {_call_text(name, args)}"
        await self._pause(
            StepPaused(run_id=self.run_id, slot=slot, round=round, number=self._count + 1, before="tool",
                       summary=summary, tool_name=name, call_id=call_id, args=args)
        )

    def reveal(self, slot: str, round: int, response: ModelResponse) -> None:
        """The response of a request a guess was made for: compare, keep, announce."""
        guess = self._guess.pop((slot, round), None)
        if guess is None:
            return
        calls = [p.tool_name for p in response.parts if isinstance(p, ToolCallPart)]
        text = any(isinstance(p, TextPart) and p.content.strip() for p in response.parts)
        does: Does = "both" if calls and text else "tool" if calls else "answer"
        actual = {"does": does, "tool": calls[0] if calls else None}
        right = guess.get("does") == does and (does == "answer" or not guess.get("tool") or guess["tool"] in calls)
        self.predictions.append(Prediction(slot=slot, round=round, guess=guess, actual=actual, right=right))
        self._emit(PredictionMade(run_id=self.run_id, slot=slot, round=round, guess=guess, actual=actual, right=right))

    def tool_call(
        self, slot: str, round: int, call_id: str, name: str, run: Callable[[], Awaitable[Any]]
    ) -> Callable[[], Awaitable[Any]]:
        """`run`, or `run` with the fault injected into this call of `name` (counted down)."""
        if self.faults is None:
            return run
        self._at = (slot, round)
        fault = self.faults.take(name, call_id)
        return run if fault is None else InjectedCall(fault, run)

    def ended(self) -> None:
        """The run ended: wake every `step()` waiting for a pause that will not come."""
        self._ended = True
        self.paused = None
        for waiter in self._reached:
            if not waiter.done():
                waiter.set_result(None)
        self._reached.clear()

    # ---- what people call (any thread) ----------------------------------------------------------
    def step(self) -> asyncio.Future[Pause | None]:
        """Let the run go on to its next pause; the future gives that pause (or `None` at the end)."""
        waiter: asyncio.Future[Pause | None] = self._loop.create_future()
        self._on_loop(lambda: self._step(waiter))
        return waiter

    def go(self) -> None:
        """Stop pausing: the run goes on to its end."""
        self._on_loop(self._go)

    def predict(self, does: str, tool: str | None = None) -> None:
        """Guess what the model does at this pause before a request (or the next one): `answer`, `tool` (which)
        or `both`."""
        if does not in ("answer", "tool", "both"):
            raise AgentcellError(f"a prediction is 'answer', 'tool' or 'both', not {does!r}")
        self._on_loop(lambda: self._predict(does, tool))

    # ---- inside ----------------------------------------------------------------------------------
    def _on_loop(self, fn: Callable[[], None]) -> None:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            fn()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(fn)

    def _step(self, waiter: asyncio.Future[Pause | None]) -> None:
        if self._ended:
            waiter.set_result(None)
            return
        self._reached.append(waiter)
        if self.paused is not None:
            self._open("next")
        else:  # not at a pause yet (just started): the first pause it reaches passes
            self._credit += 1

    def _go(self) -> None:
        self.stepping = False
        self._open("go")

    def _predict(self, does: str, tool: str | None) -> None:
        guess = {"does": does, "tool": None if does == "answer" else tool or None}
        pause = self.paused
        if pause is None or pause.before != "request":
            self._next_guess = guess  # for the next request the run pauses before
            return
        self._guess[(pause.slot, pause.round)] = guess

    def _open(self, how: str) -> None:
        gate = self._gate
        if gate is not None and not gate.done():
            gate.set_result(how)

    async def _pause(self, event: StepPaused) -> None:
        # Tool calls of one response run together: their pauses take turns, one gate at a time.
        async with self._turn:
            if self.stepping:
                await self._wait_at(event)

    async def _wait_at(self, event: StepPaused) -> None:
        if self._credit:
            self._credit -= 1
            return
        event = replace(event, number=self._count + 1)
        self._count = event.number
        pause = Pause(number=event.number, slot=event.slot, round=event.round, before=event.before,
                      summary=event.summary, predict=event.predict)
        self.paused = pause
        self._gate = self._loop.create_future()
        self._emit(event)
        reached, self._reached = self._reached, []
        for waiter in reached:
            if not waiter.done():
                waiter.set_result(pause)
        started = time.monotonic()
        how = "stopped"
        try:
            how = await self._gate
        finally:
            self.paused, self._gate = None, None
            self._emit(
                StepResumed(run_id=self.run_id, slot=event.slot, round=event.round, number=event.number,
                            how="go" if how == "go" else "next" if how == "next" else "stopped",
                            waited_ms=round((time.monotonic() - started) * 1000, 1))
            )

    def _fired(self, fault: Fault, call_id: str | None) -> None:
        slot, round = self._at
        self._emit(
            FaultInjected(run_id=self.run_id, slot=slot, round=round, target=fault.target, fault=fault.fault,
                          spec=fault.spec, call_id=call_id)
        )


class InjectedCall:
    """A tool call with its injected fault applied inside the call, so its error takes the real path."""

    def __init__(self, fault: Fault, run: Callable[[], Awaitable[Any]]) -> None:
        self.fault = fault
        self._run = run

    async def __call__(self) -> Any:
        fault = self.fault
        match fault.fault:
            case "error":
                raise InjectedFault(fault.arg or f"{fault.target} failed ({INJECTED}: --inject {fault.spec})")
            case "timeout":
                await asyncio.Event().wait()  # until the call's timeout (`injected_timeout`) cancels it
            case "slow":
                await asyncio.sleep(float(fault.number or 0))
            case "wrong-type":
                value = await self._run()
                return 12345 if isinstance(value, str) else f"12345 (a wrong type, {INJECTED})"
        return await self._run()


def injected_timeout(fault: Fault | None, timeout: float | None) -> float | None:
    """An injected `timeout` needs a timeout to run out: the tool's own, else `INJECTED_TIMEOUT_S`."""
    if fault is not None and fault.fault == "timeout" and timeout is None:
        return INJECTED_TIMEOUT_S
    return timeout


def labelled(fault: Fault | None, outcome: Outcome) -> Outcome:
    """A failed injected call's error says it was injected (a timeout's text comes from the real path)."""
    if fault is None or outcome.ok or INJECTED in outcome.text:
        return outcome
    return replace(outcome, text=f"{outcome.text} ({INJECTED}: --inject {fault.spec})")
