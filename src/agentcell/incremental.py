"""struckdown's event names, for code written against `struckdown.incremental`.

`from agentcell.incremental import SlotStreamStart, TokenDelta, ToolStarted, …` gives agentcell's own
event classes (`agentcell.events`), which also answer to struckdown's attribute names: `TokenDelta.delta`,
`ThinkingDelta.delta`, `ToolStarted.arguments`, `ToolCompleted.output` / `.was_cached`, `.slot_key`,
`CheckpointReached.segment_name`, `ProcessingComplete.early_termination`. `SlotStreamStart` is another
name for `SlotStarted`, which arrives when a slot starts (before its tool calls), not at its first token.
`ALIASES` is the list of every such name (from `events/aliases.py`). Events come from
`agentcell.complete_incremental_async` (struckdown's keywords) or `agentcell.stream`: the same run,
the same events.

`stop_when_set(stop, events)` is the one helper for struckdown's "sync consumer" advice: a run driven on
another thread's event loop, stopped from a `threading.Event` that the consumer sets. It closes the
events' generator the moment the flag is seen, which cancels the provider call in flight.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from typing import Any, TypeVar

from .events import (
    CheckpointReached,
    Event,
    ProcessingComplete,
    SlotCompleted,
    SlotRetracted,
    SlotStarted,
    ThinkingDelta,
    TokenDelta,
    ToolCompleted,
    ToolStarted,
)
from .events.aliases import ALIASES

SlotStreamStart = SlotStarted
"""struckdown's name for the event that opens a slot (agentcell: `SlotStarted`)."""

IncrementalEvent = Event
"""struckdown's name for the union of every event the generator yields."""

__all__ = [
    "ALIASES",
    "CheckpointReached",
    "IncrementalEvent",
    "ProcessingComplete",
    "SlotCompleted",
    "SlotRetracted",
    "SlotStreamStart",
    "ThinkingDelta",
    "TokenDelta",
    "ToolCompleted",
    "ToolStarted",
    "stop_when_set",
]

T = TypeVar("T")

POLL_S = 0.05
"""How often `stop_when_set` looks at the flag while waiting for an event (a threading.Event cannot wake a loop)."""


async def stop_when_set(
    stop: threading.Event, events: AsyncGenerator[T, None], *, poll: float = POLL_S
) -> AsyncGenerator[T, None]:
    """Yield `events` until `stop` is set (from any thread), then close them, cancelling the call in flight.

    For a run consumed on a thread that is not the one driving its event loop::

        stop = threading.Event()            # the consumer calls stop.set()

        async def drive():
            async for event in stop_when_set(stop, sd.complete_incremental_async(prompt, ...)):
                queue.put(event)

    The flag is looked at before each event and every `poll` seconds while waiting for one, so a stop
    lands within `poll` seconds even when no event is coming (a provider call in flight). Iteration
    then ends quietly; errors from the run (e.g. `Halted`) pass through unchanged. Closing this
    generator early closes `events` too.
    """
    current: list[asyncio.Task[list[T]]] = []  # the step in progress, which the watcher cancels
    watcher = asyncio.ensure_future(_watch(stop, poll, current))
    try:
        while not stop.is_set():
            step = asyncio.ensure_future(_next(events))
            current[:] = [step]
            try:
                got = await step
            except asyncio.CancelledError:
                this = asyncio.current_task()
                if step.cancelled() and stop.is_set() and (this is None or not this.cancelling()):
                    return  # the watcher cancelled the step: `events` has already stopped the run
                raise  # this generator itself is being cancelled (which cancelled the step too)
            if not got:
                return
            yield got[0]
    finally:
        watcher.cancel()
        await events.aclose()  # a no-op when a cancelled step has already finished `events`


async def _next(events: AsyncGenerator[T, None]) -> list[T]:
    """The next event as a one-item list, or `[]` at the end (a task cannot end in StopAsyncIteration)."""
    try:
        return [await anext(events)]
    except StopAsyncIteration:
        return []


async def _watch(stop: threading.Event, poll: float, current: list[asyncio.Task[Any]]) -> None:
    while not stop.is_set():
        await asyncio.sleep(poll)
    for step in current:
        step.cancel()  # lands inside `events` (e.g. the provider call), whose own cleanup stops the run
