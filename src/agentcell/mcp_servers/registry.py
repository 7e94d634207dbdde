"""The servers this process has running: one per spec and event loop, started on first use, reused after.

Keyed by the spec's command, environment and working directory (or URL) and by the event loop (a server's
session belongs to the loop that opened it): every run in a kernel, and every row of a batch, shares one
server per spec. A server that failed or was stopped is dropped, so the next use starts a fresh one. The
servers of a loop that has closed are forgotten (their processes ended when the loop cancelled their tasks).
At interpreter exit every server still known is ended synchronously (`atexit`), so a kernel shutdown or
restart leaves no child behind.
"""

from __future__ import annotations

import asyncio
import atexit
from collections.abc import Sequence

from ..errors import McpServerError
from .live import LiveServer
from .spec import ServerSpec

_servers: dict[tuple[object, ...], LiveServer] = {}
_starting: dict[tuple[object, ...], asyncio.Future[LiveServer]] = {}


def _key(spec: ServerSpec, loop: asyncio.AbstractEventLoop) -> tuple[object, ...]:
    return (*spec.key, id(loop))


async def ensure(spec: ServerSpec) -> LiveServer:
    """The running server for `spec` on this loop, started now if there is none (concurrent callers share one
    start); raise `McpServerError` if it does not come up."""
    loop = asyncio.get_running_loop()
    _forget_closed()
    key = _key(spec, loop)
    live = _servers.get(key)
    if live is not None and live.alive and live.state == "running":
        return live
    if live is not None:
        _servers.pop(key, None)
    pending = _starting.get(key)
    if pending is not None:
        return await asyncio.shield(pending)
    future: asyncio.Future[LiveServer] = loop.create_future()
    _starting[key] = future
    live = LiveServer(spec, loop)
    try:
        await live.start()
    except BaseException as exc:
        future.set_exception(exc if isinstance(exc, Exception) else McpServerError(repr(exc)))
        future.exception()  # retrieved: a failure with no other waiter is not "never retrieved"
        raise
    finally:
        _starting.pop(key, None)
    _servers[key] = live
    future.set_result(live)
    return live


def running() -> list[LiveServer]:
    """Every server this process knows of that is not stopped (failed ones stay listed until replaced)."""
    _forget_closed()
    return list(_servers.values())


def find(name: str | None) -> list[LiveServer]:
    """The servers named `name` (all of them for `None`)."""
    return [live for live in running() if name is None or live.spec.name == name]


async def stop(name: str | None = None) -> list[LiveServer]:
    """Stop the servers named `name` (every one for `None`) on this loop and wait until their processes are gone.

    Raises `McpServerError` for a name no running server has, listing the names there are."""
    chosen = find(name)
    if name is not None and not chosen:
        names = ", ".join(sorted({live.spec.name for live in running()})) or "none"
        raise McpServerError(f"no MCP server is named {name!r}; running: {names}")
    loop = asyncio.get_running_loop()
    for live in chosen:
        _servers.pop(_key(live.spec, live.loop), None)
        if live.loop is loop:
            await live.stop()
        else:
            live.kill_now()
    return chosen


async def stop_loop() -> None:
    """Stop every server of the running loop and wait until their processes are gone (a loop that is ending:
    a Dask worker's row loop, `batch/dask_loop.py`); servers of other loops are left alone."""
    loop = asyncio.get_running_loop()
    for key, live in list(_servers.items()):
        if live.loop is loop:
            _servers.pop(key, None)
            await live.stop()


def detach(name: str | None = None) -> list[LiveServer]:
    """Forget the servers named `name` (every one for `None`) and end their processes now, without awaiting (a
    line magic cannot await); their tasks are left to tidy up on their loops (`LiveServer.stop`)."""
    chosen = find(name)
    for live in chosen:
        _servers.pop(_key(live.spec, live.loop), None)
        live.kill_now()
        if not live.loop.is_closed():
            live.loop.call_soon_threadsafe(_tidy, live)
    return chosen


_tidying: set[asyncio.Task[None]] = set()


def _tidy(live: LiveServer) -> None:
    task = live.loop.create_task(live.stop())
    _tidying.add(task)
    task.add_done_callback(_tidying.discard)


def kill_all_now() -> None:
    """End every known server's process at once, without an event loop (interpreter exit)."""
    for live in list(_servers.values()):
        live.kill_now()
    _servers.clear()


def specs_in_use() -> Sequence[ServerSpec]:
    return [live.spec for live in running()]


def _forget_closed() -> None:
    for key, live in list(_servers.items()):
        if live.loop.is_closed():
            live.kill_now()
            _servers.pop(key, None)


atexit.register(kill_all_now)
