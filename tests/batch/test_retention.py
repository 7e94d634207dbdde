"""Retention counts a batch as one journal: its rows never evict the notebook's other runs, and a row's
transcript lasts as long as its batch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentcell.batch import map
from agentcell.engine import start_run
from agentcell.journal import Retention, clean, list_runs, store
from tests.engine.conftest import Script, slot, template

from .conftest import Shouter

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"


async def _single() -> str:
    run = start_run(template(slot("a")), model=Script(["hi"]).model)  # the default folder: $AGENTCELL_JOURNAL
    await run.wait()
    return run.run_id


@pytest.mark.slow  # 3,000 journalled rows
async def test_a_3000_row_batch_leaves_an_earlier_single_run_journal_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path))
    monkeypatch.setattr(store, "_pruned", {})  # this folder is pruned at the next run, whatever ran before
    earlier = await _single()
    batch = map(TEMPLATE, [f"w{i}" for i in range(3000)], model=Shouter(pause=0).model, concurrency=64)
    result = await batch
    assert result.counts == {"completed": 3000}
    store._pruned.clear()
    later = await _single()  # applies the default rule (the newest 200 runs)
    assert {earlier, later} <= {f.run_id for f in list_runs(tmp_path)}
    for index in (0, 2999):  # a row's transcript is still there
        events = batch.events_of(index)
        assert events is not None and events[-1].kind == "processing_complete"


async def test_retention_ranks_a_batch_as_one_run_and_removes_it_whole(tmp_path: Path) -> None:
    batch = map(TEMPLATE, [f"w{i}" for i in range(30)], model=Shouter(pause=0).model, journal=tmp_path)
    await batch
    rows_folder = next(p for p in (tmp_path / "batches").iterdir() if p.is_dir())
    assert len(list(rows_folder.glob("*.jsonl"))) == 30 and list_runs(tmp_path) == []
    for i, age in enumerate((10, 20, 30)):  # three single runs, one older than the batch (age 25)
        path = tmp_path / f"run{i}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (1_000_000_000 - age, 1_000_000_000 - age))
    for path in [rows_folder, rows_folder.with_suffix(".jsonl")]:
        os.utime(path, (1_000_000_000 - 25, 1_000_000_000 - 25))
    removed = clean(tmp_path, keep=Retention(runs=3, days=None), now=1_000_000_000.0)
    assert [f.run_id for f in removed] == ["run2"]  # 4 units: run0, run1, the batch, run2
    removed = clean(tmp_path, keep=Retention(runs=2, days=None), now=1_000_000_000.0)
    assert [f.batch for f in removed] == [True]
    assert not rows_folder.exists() and not rows_folder.with_suffix(".jsonl").exists()
    assert [f.run_id for f in list_runs(tmp_path)] == ["run0", "run1"]
