"""The event loop a Dask worker process runs its rows on: one, long-lived, so the rows share their MCP servers.

Why not `asyncio.run` per row: the MCP registry keeps one server per spec *and event loop* (a server's session
belongs to the loop that opened it), and a fresh loop per row would start, and end, a server per row (1,000
rows, 1,000 `initialize` handshakes). Why not the worker's own loop: a row's work must never delay the
worker's heartbeats. So every row a worker process runs is a task on one loop in a daemon thread of its own
(`run`); the rows a worker runs at once (one per worker thread) run concurrently on it, as a batch's rows do
on the kernel's loop, and reuse one server per spec. With `processes=False` the workers of the process share
the loop and its servers.

Ending: `RowLoopPlugin` (a Dask worker plugin `DaskRows` registers once per client) stops the loop's servers
and ends the loop when the last worker of the process that used it closes, so no server outlives its worker;
the registry's `atexit` backstop ends any server a killed worker left.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from distributed.diagnostics.plugin import WorkerPlugin

T = TypeVar("T")

CLOSE_TIMEOUT_S = 30.0
"""How long a closing worker waits for its servers to end (each is bounded by the stdio client's escalation)."""

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_workers: set[str] = set()
"""The addresses of this process's workers that have the plugin: the loop ends with the last of them."""


def row_loop() -> asyncio.AbstractEventLoop:
    """This process's row loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="agentcell-dask-rows", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` on the row loop and wait for it (from a Dask task's thread)."""
    return asyncio.run_coroutine_threadsafe(coro, row_loop()).result()


async def close() -> None:
    """Stop the row loop's MCP servers (waiting until their processes are gone), then end the loop."""
    global _loop, _thread
    with _lock:
        loop, thread = _loop, _thread
        _loop = _thread = None
    if loop is None or loop.is_closed():
        return
    from ..mcp_servers import registry

    stopping = asyncio.run_coroutine_threadsafe(registry.stop_loop(), loop)
    with contextlib.suppress(Exception):  # a server that would not end was killed by its group; go on
        await asyncio.wait_for(asyncio.wrap_future(stopping), CLOSE_TIMEOUT_S)
    loop.call_soon_threadsafe(loop.stop)
    if thread is not None:
        await asyncio.to_thread(thread.join, CLOSE_TIMEOUT_S)
    if not loop.is_running():
        loop.close()


class RowLoopPlugin(WorkerPlugin):
    """Ends the row loop, and its servers, when the last worker of the process closes."""

    name = "agentcell-row-loop"
    idempotent = True
    """Registered once: registering again would tear the plugin down, and the loop with it, mid-batch."""

    def setup(self, worker: Any) -> None:
        with _lock:
            _workers.add(str(worker.address))

    async def teardown(self, worker: Any) -> None:
        with _lock:
            _workers.discard(str(worker.address))
            last = not _workers
        if last:
            await close()
