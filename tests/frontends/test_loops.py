"""Which loop runs here, and awaiting a run or batch from another loop than its own (a main-shell
cell awaiting a run a kernel subshell started): the wait runs on the owning loop, the result or error
comes back, cancelling the waiter leaves the run going, and a stopped owner loop is one clear error
instead of a hang."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic_ai.models.function import FunctionModel

from agentcell.batch import map
from agentcell.errors import NoEventLoop
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.loops import running_loop, wait_on
from agentcell.options import RunOptions
from agentcell.template import compile_template
from tests.batch.conftest import Shouter

pytestmark = pytest.mark.anyio


@pytest.fixture
def other_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A loop running on a thread of its own, like a kernel subshell's."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


def endless_model() -> FunctionModel:
    async def words(_messages: Any, _info: Any) -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0.01)
            yield "word "

    return FunctionModel(stream_function=words, model_name="endless")


def on(loop: asyncio.AbstractEventLoop, coro: Any) -> Any:
    return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=30)


async def test_the_wait_runs_on_the_owning_loop_and_its_value_comes_back(other_loop: asyncio.AbstractEventLoop) -> None:
    async def where() -> int:
        return threading.get_ident()

    assert await wait_on(other_loop, where, what="x") != threading.get_ident()
    assert await wait_on(asyncio.get_running_loop(), where, what="x") == threading.get_ident()

    async def boom() -> None:
        raise ValueError("from the other loop")

    with pytest.raises(ValueError, match="from the other loop"):
        await wait_on(other_loop, boom, what="x")


async def test_cancelling_the_waiter_leaves_the_awaited_task_going(other_loop: asyncio.AbstractEventLoop) -> None:
    gate = threading.Event()

    async def start() -> asyncio.Task[str]:
        async def work() -> str:
            while not gate.is_set():
                await asyncio.sleep(0.01)
            return "done"
        return asyncio.get_running_loop().create_task(work())

    task = on(other_loop, start())
    waiter = asyncio.ensure_future(wait_on(other_loop, lambda: asyncio.shield(task), what="x"))
    await asyncio.sleep(0.05)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    gate.set()
    assert await wait_on(other_loop, lambda: asyncio.shield(task), what="x") == "done"


async def test_a_stopped_owner_loop_is_a_clear_error_not_a_hang() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(NoEventLoop, match="this run runs on an event loop that has stopped"):
            await wait_on(loop, lambda: asyncio.sleep(0), what="this run")
    finally:
        loop.close()


async def test_a_batch_started_on_another_loop_is_awaited_here(other_loop: asyncio.AbstractEventLoop) -> None:
    async def start() -> Any:
        return map("SHOUT: {{ item }} [[answer]]", ["a", "b", "c"], model=Shouter().model, journal=False)

    batch = on(other_loop, start())
    result = await batch
    assert [r["answer"] for r in result.to_records()] == ["A", "B", "C"]


async def test_a_cells_run_started_on_another_loop_is_awaited_here(other_loop: asyncio.AbstractEventLoop) -> None:
    """What `%%agent -o run` binds (a `RunHandle`, here without a widget) awaited from another loop."""
    async def start() -> Any:
        spec = LaunchSpec(template=compile_template("SHOUT: hello [[answer]]"), quiet=True,
                          options=RunOptions(model=Shouter().model, journal=False))
        return launch(spec)

    handle = on(other_loop, start())
    result = await handle
    assert (result.status, handle.answer) == ("completed", "HELLO")


async def test_a_run_on_another_loop_is_superseded_on_its_own_loop(other_loop: asyncio.AbstractEventLoop) -> None:
    """Re-running a cell in another shell replaces its run there: the old run's view hears of it on its loop."""
    async def start() -> Any:
        spec = LaunchSpec(template=compile_template("Tell a long story [[answer]]"), quiet=True,
                          options=RunOptions(model=endless_model(), journal=False))
        handle = launch(spec)
        threads: list[int] = []
        handle.watch(lambda event: threads.append(threading.get_ident()) if event.kind == "run_warning" else None)
        return handle, threads

    handle, threads = on(other_loop, start())
    handle.supersede()  # from this loop's thread
    result = await handle
    assert result.status == "stopped" and handle.superseded
    assert threads and set(threads) != {threading.get_ident()}


async def test_running_loop_is_this_threads_loop_or_none(other_loop: asyncio.AbstractEventLoop) -> None:
    assert running_loop() is asyncio.get_running_loop()
    assert on(other_loop, _running()) is other_loop
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(running_loop()))
    worker.start()
    worker.join()
    assert seen == [None]


async def _running() -> asyncio.AbstractEventLoop | None:
    return running_loop()


async def test_an_ended_run_or_batch_is_awaited_after_its_loop_stopped() -> None:
    """A subshell closed after its run ended: `await` still gives what it produced, no loop needed."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> Any:
        spec = LaunchSpec(template=compile_template("SHOUT: hello [[answer]]"), quiet=True,
                          options=RunOptions(model=Shouter().model, journal=False))
        handle = launch(spec)
        batch = map("SHOUT: {{ item }} [[answer]]", ["a"], model=Shouter().model, journal=False)
        await handle
        await batch
        return handle, batch

    handle, batch = on(loop, start())
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    try:
        assert (await handle).status == "completed"
        assert (await batch).to_records()[0]["answer"] == "A"
    finally:
        loop.close()
