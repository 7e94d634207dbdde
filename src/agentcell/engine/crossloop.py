"""Awaiting a run or a batch from another event loop than the one it runs on.

A cell run in a kernel subshell (ipykernel >= 7) runs on that subshell's thread and loop, and so does
a run or batch it starts. `await run` in a main-shell cell then awaited a future of the other loop, and
asyncio raised "attached to a different loop". The wait is handed to the owning loop instead, and the
awaiting cell gets its result or exception through a thread-safe future. Cancelling the awaiting cell
cancels only the wait there, as it does on one loop: the run goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..errors import NoEventLoop

T = TypeVar("T")


async def wait_on(loop: asyncio.AbstractEventLoop, wait: Callable[[], Awaitable[T]], *, what: str) -> T:
    """`await wait()` on `loop`, from whichever loop awaits (`what` names the awaited thing for errors)."""
    if asyncio.get_running_loop() is loop:
        return await wait()
    if loop.is_closed() or not loop.is_running():
        raise NoEventLoop(f"{what} runs on an event loop that has stopped (a kernel subshell that was closed?), "
                          "so it cannot end; read what it produced from its status and values")

    async def there() -> T:
        return await wait()

    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(there(), loop))
