"""Keeping what a run's own code raises inside the run: it may fail the run, never the event loop.

asyncio re-raises `SystemExit` and `KeyboardInterrupt` out of the loop itself when a task ends with
one (`Task.__step`), and anyio's task groups treat every non-`Exception` specially; in a kernel that
means a dead loop: no reply to `1+1`, Interrupt ignored, the notebook's state lost on restart. So a
`sys.exit()` in a model, a hook or an approval callback is turned into `Escaped` (an ordinary
exception) right where pydantic-ai runs it (`Containment.wrap_node_run`), and the slot fails with it.
Tool calls are contained one level deeper, per call (`tooltask.py`).

A `CancelledError` is a Stop only when the task it lands in is being cancelled (`stop_requested`);
one that code raises on its own is a failure like any other.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import AgentNode, NodeResult, WrapNodeRunHandler

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


@dataclass
class Containment(AbstractCapability[Any]):
    """Turns the process-exit exceptions of a slot's model requests, hooks and callbacks into `Escaped`."""

    async def wrap_node_run(
        self, ctx: RunContext[Any], *, node: AgentNode[Any], handler: WrapNodeRunHandler[Any]
    ) -> NodeResult[Any]:
        try:
            return await handler(node)
        except PROCESS_EXITS as exc:
            raise Escaped(exc) from exc
