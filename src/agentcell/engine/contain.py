"""Keeping what a run's own code raises inside the run: it may fail the run, never the event loop.

asyncio re-raises `SystemExit` and `KeyboardInterrupt` out of the loop itself when a task ends with
one (`Task.__step`), and anyio's task groups treat every non-`Exception` specially; in a kernel that
means a dead loop: no reply to `1+1`, Interrupt ignored, the notebook's state lost on restart. So a
`sys.exit()` is turned into `Escaped` (an ordinary exception) where the run calls code that is not
its own, before pydantic-ai's graph sees it (a process exit that reaches pydantic-ai's graph ends its
iterator task too, and that task's end reaches the loop even if the run's own task catches it):
* a model's code runs as its stream is pulled, in the slot's event-stream handler (`streaming.py`;
  the request hooks of the run's `SlotModel`, compaction included, run in that pull too) and the
  compaction summary's (`compaction.py`); both contain what it raises;
* an approval callback is contained where it is awaited (`approvals.py`);
* tool calls per call (`tooltask.py`); the run's top task in `cancel_cooperatively` below.
Not in a `wrap_node_run` capability hook around every node, as before: pydantic-ai runs each node
through one more layer of calls and run-context copies for a capability that has one.

A `CancelledError` is a Stop only when the task it lands in is being cancelled (`stop_requested`);
one that code raises on its own is a failure like any other.

`cancel_cooperatively` delivers Stop into pydantic-ai as an anyio scope cancellation instead of a
native `task.cancel()`. pydantic-ai (2.68) shields its own teardown with anyio scopes; a native cancel
landing in one window of `Agent.run` (while it drains its readiness waiter) skips the `finally` that
releases its `wrap_run` task, which then waits forever, holding the run (seen in 3 of 60 Stops timed
at random while a guard's request was opening).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from ..providers.secrets import mask_secrets

PROCESS_EXITS = (SystemExit, KeyboardInterrupt, GeneratorExit)
"""What code inside a run may raise that is not an `Exception` (besides `CancelledError`)."""


class Escaped(Exception):
    """A `SystemExit`, `KeyboardInterrupt` or `GeneratorExit` raised inside a run, carried as an ordinary
    exception so it ends the slot, not the loop (`original` is what was raised)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(describe(original))
        self.original = original


def describe(exc: BaseException) -> str:
    """`Type: message` for an exception, even one whose `__str__` itself raises; credentials masked."""
    if isinstance(exc, Escaped):
        exc = exc.original
    try:
        message = str(exc)
    except BaseException:  # a broken __str__ must not turn one error into another that ends the run
        message = "<its message could not be read: __str__ raised>"
    message = mask_secrets(message)  # an HTTP client's error may quote a URL with its credentials
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def stop_requested() -> bool:
    """Whether the current task is being cancelled (Stop, or its owner ending it), as opposed to code in
    it having raised `CancelledError` on its own."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


T = TypeVar("T")

ABANDON_AFTER_S = 0.5
"""How long a Stop waits for cancelled work (a tool call, a model request) to end before leaving it behind."""

_abandoned: set[asyncio.Task[Any]] = set()
"""Work left running after Stop: referenced until it ends, so it is not collected mid-flight."""


async def cancel_cooperatively(make: Callable[[], Awaitable[T]], *, what: str, warn: Callable[[str], None]) -> T:
    """Await `make()` in a task of its own under an anyio cancel scope; a cancellation of the caller reaches it as
    that scope's cancellation (see the module docstring), and what ignores it is abandoned after `ABANDON_AFTER_S`.
    """
    scope = anyio.CancelScope()

    async def body() -> T:
        with scope:
            try:
                return await make()
            except PROCESS_EXITS as exc:  # never let these end a task: asyncio re-raises them out of the loop
                raise Escaped(exc) from exc
        raise asyncio.CancelledError  # the scope caught the cancellation passed on to it

    task = asyncio.ensure_future(body())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.done() and not stop_requested():
            raise  # cancelled from inside, nobody stopped it: the caller reports that as a failure
        scope.cancel()
        # Twice a tool's grace: a tool ignoring Stop inside the request is given up first, and the
        # request then ends on its own.
        await settle_or_abandon(task, what=what, warn=warn, grace=2 * ABANDON_AFTER_S)
        raise


async def settle_or_abandon(
    task: asyncio.Task[Any], *, what: str, warn: Callable[[str], None], grace: float = ABANDON_AFTER_S
) -> None:
    """Give cancelled `task` `grace` seconds to end; else leave it running (referenced), warning about `what`."""
    try:
        with anyio.CancelScope(shield=True):  # a cancelled anyio scope around us must not cut this wait short
            await asyncio.wait({task}, timeout=grace)
    finally:
        if not task.done():
            _abandoned.add(task)
            task.add_done_callback(_forget)
            warn(
                f"{what} did not stop within {grace:g} s of being cancelled; "
                "it was abandoned and may still be running"
            )
        elif not task.cancelled():
            task.exception()  # retrieved: what it ended with after Stop is not news


def _forget(task: asyncio.Task[Any]) -> None:
    _abandoned.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a late failure of abandoned work is not news
