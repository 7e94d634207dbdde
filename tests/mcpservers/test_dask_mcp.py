"""`--engine dask` with an MCP server: each worker process starts one server from the pickled spec and its rows
share it (not one per row), the servers end with the cluster (no process left anywhere, orphans included), and
a live pydantic-ai MCP toolset, which cannot travel, is one sentence before any row starts."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentcell.batch import BatchError, map
from agentcell.mcp_servers import mcp
from tests.batch.conftest import calling

from .conftest import fault

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # worker processes and real servers start

TEMPLATE = "SHOUT: {{ item }} [[answer|use_tools=true]]"
WORKERS = 2
GONE_S = 30
"""A bound on waiting for processes to be reaped after the cluster closed, not a timing under test."""
GUARD_S = 90
"""A hang guard, not a timing under test."""


def processes_with(marker: str) -> list[int]:
    """Every process on the machine whose environment holds `marker` (an orphan re-parented to init too)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state != "Z":
            found.append(int(entry))
    return found


@pytest.fixture(params=[True, False], ids=["processes", "threads"])
async def cluster(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """Worker processes (each its own row loop and servers), or workers in this process (one row loop and server
    for both, ended by the worker plugin: no interpreter exit would end it)."""
    for name in ("distributed", "distributed.worker", "distributed.scheduler", "distributed.nanny"):
        logging.getLogger(name).setLevel(logging.ERROR)
    where = {"host": "127.0.0.1"} if request.param else {}  # in one process Dask talks in-process, not over TCP
    local = await distributed.LocalCluster(n_workers=WORKERS, threads_per_worker=3, processes=request.param,
                                           asynchronous=True, dashboard_address=":0", **where)
    yield local
    await local.close()


async def test_each_worker_starts_one_server_its_rows_share_and_none_outlives_the_cluster(
    cluster: Any, tmp_path: Path
) -> None:
    import cloudpickle

    import tests.batch.conftest

    cloudpickle.register_pickle_by_value(tests.batch.conftest)  # the scripted model travels by value
    starts = tmp_path / "starts.log"
    marker = f"FAULT_SERVER_STARTS={starts}"
    server = mcp(fault(), name="f", env={"FAULT_SERVER_STARTS": str(starts)})
    words = [f"w{i:02d}" for i in range(12)]
    async with distributed.Client(cluster, asynchronous=True) as client:
        model = calling("echo", "text", then=lambda returns: returns[-1].upper())
        result = await map(TEMPLATE, words, model=model, client=client, concurrency=6, journal=False,
                           toolsets=[server])
        assert [r["answer"] for r in result.to_records()] == [f"ECHO: {w.upper()}" for w in words]
        started = starts.read_text().split()
        assert 1 <= len(started) <= WORKERS  # one per worker that ran rows, not one per row
        assert {str(pid) for pid in processes_with(marker)} == set(started)  # still running, for the next batch

        again = await map(TEMPLATE, ["more"], model=model, client=client, journal=False, toolsets=[server])
        assert again.to_records()[0]["answer"] == "ECHO: MORE"
        assert starts.read_text().split() == started  # the second batch reused a worker's server
    await cluster.close()
    deadline = time.monotonic() + GONE_S
    while processes_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert processes_with(marker) == []


async def test_a_live_pydantic_ai_mcp_toolset_cannot_travel_and_says_so_before_any_row() -> None:
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    model = calling("echo", "text", then=lambda returns: returns[-1])
    live = MCPToolset(StdioTransport(sys.executable, ["-m", "mcp_server_time"]))
    async with asyncio.timeout(GUARD_S), live:  # connected: its session cannot be moved to another process
        with pytest.raises(BatchError, match=r"^the toolset .* cannot be sent to Dask workers \(TypeError: cannot "
                                             r"pickle .*\); for an MCP server pass agentcell\.mcp\(\.\.\.\) \(each "
                                             r"worker starts its own"):
            map(TEMPLATE, [uuid.uuid4().hex], model=model, client=_AsyncClientStandIn(), journal=False,
                toolsets=[live])


class _AsyncClientStandIn:
    """What `map` checks before any row: an asynchronous client (no cluster is reached: the refusal comes first)."""

    asynchronous = True
