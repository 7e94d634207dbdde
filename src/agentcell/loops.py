"""Which event loop: the one running here, and awaiting a run or a batch from another loop than its own.

`running_loop()` is the running loop or `None` (the views, magics and `cancel`s ask it to choose between
acting at once and passing the work to the owner's loop with `call_soon_threadsafe`).

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

from .errors import NoEventLoop

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or `None` (plain Python, a kernel's other threads)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def wait_on(loop: asyncio.AbstractEventLoop, wait: Callable[[], Awaitable[T]], *, what: str) -> T:
    """`await wait()` on `loop`, from whichever loop awaits (`what` names the awaited thing for errors)."""
    if running_loop() is loop:
        return await wait()
    if loop.is_closed() or not loop.is_running():
        raise NoEventLoop(f"{what} runs on an event loop that has stopped (a kernel subshell that was closed?), "
                          "so it cannot end; read what it produced from its status and values")

    async def there() -> T:
        return await wait()

    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(there(), loop))
