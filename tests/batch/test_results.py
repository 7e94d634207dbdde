"""The results table and its exports, and the batch ceiling `max_cost`."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from agentcell.batch import BatchOptions, BatchResult, RowResult
from agentcell.batch.inputs import Row, read_rows
from agentcell.batch.runner import Batch
from agentcell.options import RunOptions
from agentcell.template import compile_template
from agentcell.usage import Usage

pytestmark = pytest.mark.anyio


def table() -> BatchResult:
    rows = (
        RowResult(index=0, key="k0", input={"text": "a"}, status="completed", results={"n": 1, "facts": {"x": [1, 2]}},
                  usage=Usage(requests=1, input_tokens=10, output_tokens=3, cost=0.001), run_id="r0"),
        RowResult(index=1, key="k1", input={"text": "b"}, status="failed", error="RuntimeError: boom", run_id="r1"),
        RowResult(index=2, key="k2", input={"text": "c"}, status="not_started", error="stopped"),
    )
    return BatchResult(rows=rows, slots=("n", "facts"), keep=True, status="stopped", reason="stopped")


def test_records_have_the_input_slot_and_usage_columns() -> None:
    records = table().to_records()
    assert records[0] == {"text": "a", "n": 1, "facts": {"x": [1, 2]}, "status": "completed", "error": None,
                          "requests": 1, "tool_calls": 0, "input_tokens": 10, "output_tokens": 3, "cost": 0.001,
                          "run_id": "r0"}
    assert [r["status"] for r in records] == ["completed", "failed", "not_started"]
    assert table().counts == {"completed": 1, "failed": 1, "not_started": 1}


def test_csv_json_and_parquet_round_trip(tmp_path: Path) -> None:
    result = table()
    result.to_csv(tmp_path / "out.csv")
    result.to_json(tmp_path / "out.json")
    result.to_parquet(tmp_path / "out.parquet")
    csv = pd.read_csv(tmp_path / "out.csv")
    assert list(csv.columns) == result.columns
    assert json.loads(csv.loc[0, "facts"]) == {"x": [1, 2]}  # JSON values as JSON text
    assert json.loads((tmp_path / "out.json").read_text())[1]["error"] == "RuntimeError: boom"
    parquet = pd.read_parquet(tmp_path / "out.parquet")
    assert parquet["status"].tolist() == ["completed", "failed", "not_started"]
    assert json.loads(parquet.loc[0, "facts"]) == {"x": [1, 2]}


async def test_max_cost_stops_starting_rows_once_the_known_cost_passes_it() -> None:
    template = compile_template("{{ item }} [[answer]]")
    rows = read_rows([f"w{i}" for i in range(10)])

    async def priced(row: Row, run_id: str) -> RowResult:
        await asyncio.sleep(0.01)
        return replace(batch.rows[row.index], status="completed", results={"answer": row.fields["item"]},
                       usage=Usage(requests=1, cost=0.02), run_id=run_id)

    batch = Batch(template, rows, RunOptions(), BatchOptions(concurrency=1, max_cost=0.05), runner=priced)
    result = await batch
    assert [r.status for r in result.rows] == ["completed"] * 3 + ["not_started"] * 7
    assert result.status == "stopped"
    assert result.reason == "max_cost $0.05 reached ($0.06 spent)"
    assert result.usage.cost == pytest.approx(0.06)
