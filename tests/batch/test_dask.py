"""Rows on a Dask `LocalCluster` of 2 processes on 127.0.0.1 (`--engine dask`)."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentcell.batch import BatchError, map
from agentcell.tools import readonly
from tests.openai_server import FakeOpenAI

from .conftest import Shouter
from .test_server import shout, until

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a real Dask cluster: worker processes start
TEMPLATE = "SHOUT: {{ item }} [[answer]]"


@pytest.fixture
async def client() -> AsyncIterator[Any]:
    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)  # a cancelled task logs a WARNING per row
    cluster = await distributed.LocalCluster(n_workers=2, threads_per_worker=4, processes=True, asynchronous=True,
                                             dashboard_address=":0", host="127.0.0.1")  # any free port: 8787 may be taken
    dask_client = await distributed.Client(cluster, asynchronous=True)
    yield dask_client
    await dask_client.close()
    await cluster.close()


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    # Replies last 1.5-2.7 s: a row in flight at Stop is still streaming when the stop reaches its worker.
    with FakeOpenAI(default=shout(pieces=5, delay=0.3)) as fake:
        yield fake


async def test_rows_run_on_the_cluster_and_come_back_in_row_order(client: Any) -> None:
    import sys

    import cloudpickle

    # Like a notebook's functions, the test's scripted model travels by value (workers cannot import tests).
    cloudpickle.register_pickle_by_value(sys.modules[Shouter.__module__])
    words = [f"w{i:02d}" for i in range(40)]
    batch = map(TEMPLATE, words, model=Shouter().model, client=client, concurrency=8, journal=False)
    assert batch.engine == "dask"
    seen = [row.index async for row in batch]
    result = await batch
    assert sorted(seen) == list(range(40))
    assert [r["answer"] for r in result.to_records()] == [w.upper() for w in words]
    workers = await client.run(lambda: __import__("os").getpid())
    assert len(workers) == 2


async def test_a_tool_that_cannot_travel_is_one_line_before_any_row(client: Any) -> None:
    lock = threading.Lock()

    @readonly
    def fetch(word: str) -> str:
        """Fetch a page."""
        with lock:
            return word

    model = Shouter()
    with pytest.raises(BatchError, match=r"^tool 'fetch' cannot be sent to Dask workers \(TypeError: cannot pickle "
                                         r"'_thread.lock' object\); make it a plain function that opens what it needs "
                                         r"inside, or run without --engine dask$"):
        map(TEMPLATE, ["a"], model=model.model, tools=[fetch], client=client, journal=False)
    assert model.requests == 0


async def test_a_synchronous_client_is_refused() -> None:
    class Sync:
        asynchronous = False

    with pytest.raises(BatchError, match=r"^client= must be an asynchronous distributed\.Client"):
        map(TEMPLATE, ["a"], model=Shouter().model, client=Sync(), journal=False)


async def test_stop_cancels_the_futures_and_the_rows_running_on_workers(client: Any, server: FakeOpenAI) -> None:
    words = [f"w{i:02d}" for i in range(30)]
    batch = map(TEMPLATE, words, model=f"openai-compat:fake-model@{server.base_url}", client=client,
                concurrency=4, journal=False)
    await until(lambda: sum(r.status == "completed" for r in batch.rows) >= 4
                and any(r.outcome == "pending" and r.chunks_sent > 0 for r in server.chat_requests), timeout=90)
    stopped_at = time.monotonic()
    batch.cancel()
    result = await batch
    counts = result.counts
    assert result.status == "stopped" and counts.get("not_started", 0) > 0
    await asyncio.sleep(0.5)  # a task a worker picked up just as Stop was sent sees the stop event too
    await until(lambda: all(r.outcome != "pending" for r in server.chat_requests), timeout=30)
    outcomes = [r.outcome for r in server.chat_requests]
    assert outcomes.count("completed") >= counts["completed"]
    assert "disconnected" in outcomes  # a row running on a worker had its request closed
    late = [r for r in server.chat_requests if r.received_at > stopped_at]
    assert len(late) <= 4 and all(r.outcome == "disconnected" for r in late)  # nothing new ran to its end


async def test_the_compiled_template_travels_so_include_paths_need_not_exist_on_workers(
    client: Any, tmp_path: Any
) -> None:
    """The worker runs the template compiled in the kernel: an include found through `include_paths`
    (`--include-path`) is in it already, though the worker was never told that folder."""
    import sys

    import cloudpickle

    from agentcell.template import compile_template

    cloudpickle.register_pickle_by_value(sys.modules[Shouter.__module__])
    (tmp_path / "shout.sd").write_text("SHOUT: {{ item }}\n")
    template = compile_template('<include src="shout.sd"/> [[answer]]', include_paths=[tmp_path])
    (tmp_path / "shout.sd").unlink()  # not even the kernel could find it again
    result = await map(template, ["ab", "cd"], model=Shouter().model, client=client, concurrency=2, journal=False)
    assert [r["answer"] for r in result.to_records()] == ["AB", "CD"]
