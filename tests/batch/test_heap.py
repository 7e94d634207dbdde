"""While a batch runs, the objects from before it are out of the collector's passes (`batch/heap.py`)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from agentcell.batch import heap, map

from .conftest import Shouter

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"


@pytest.fixture(autouse=True)
def clean_heap() -> Iterator[None]:
    gc.unfreeze()  # start from an unfrozen heap, whatever ran before
    heap._holders, heap._frozen = 0, False
    yield
    gc.unfreeze()  # whatever a failing test left frozen
    heap._holders, heap._frozen = 0, False


@pytest.mark.slow  # a full collection of a heap grown on purpose
async def test_a_batch_freezes_the_heap_while_it_runs_and_gives_it_back() -> None:
    before = object()  # tracked by the collector, made before the batch
    assert gc.is_tracked([before])
    model = Shouter()
    batch = map(TEMPLATE, [f"w{i}" for i in range(40)], model=model.model, concurrency=8, journal=False)
    seen: list[int] = []
    batch.watch(lambda _row: seen.append(gc.get_freeze_count()))
    result = await batch
    assert result.status == "completed"
    assert seen and min(seen) > 0  # frozen while the rows ran
    assert gc.get_freeze_count() == 0  # and given back at the end


async def test_overlapping_batches_unfreeze_once_the_last_one_ends() -> None:
    slow, fast = Shouter(), Shouter()
    a = map(TEMPLATE, [f"a{i}" for i in range(30)], model=slow.model, concurrency=2, journal=False)
    b = map(TEMPLATE, [f"b{i}" for i in range(4)], model=fast.model, concurrency=4, journal=False)
    await b
    assert a.result is None and gc.get_freeze_count() > 0  # b ended, a still runs: still frozen
    await a
    assert gc.get_freeze_count() == 0


async def test_a_stopped_batch_gives_the_heap_back() -> None:
    batch = map(TEMPLATE, [f"w{i}" for i in range(50)], model=Shouter().model, concurrency=4, journal=False)
    await asyncio.sleep(0.05)
    batch.cancel()
    result = await batch
    assert result.status == "stopped"
    assert gc.get_freeze_count() == 0


async def test_someone_elses_freeze_and_a_disabled_collector_are_left_alone() -> None:
    gc.freeze()  # e.g. a server that froze its heap before forking
    await map(TEMPLATE, ["x", "y"], model=Shouter().model, concurrency=2, journal=False)
    assert gc.get_freeze_count() > 0  # not unfrozen at the batch's end (objects freed meanwhile leave the count)
    gc.unfreeze()
    gc.disable()
    try:
        heap.hold()
        assert gc.get_freeze_count() == 0
        heap.release()
    finally:
        gc.enable()
