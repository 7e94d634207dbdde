"""Scores per model: a batch over the same rows on several models, scored alike, side by side."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Collection
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell import AgentcellError
from agentcell.batch import compare
from agentcell.batch.by_model import cost_text, selection_cells

from .conftest import last_prompt

pytestmark = pytest.mark.anyio

TEMPLATE = "Question {{ qid }}: {{ question }} [[answer]]"
RIGHT_A = set(range(0, 30, 3)) | set(range(1, 30, 3))  # 20 of 30
RIGHT_B = set(range(6, 30))  # 24 of 30, right on different rows


def rows(n: int = 30) -> list[dict[str, Any]]:
    return [{"qid": i, "question": f"what is {i} + {i}?", "gold": str(2 * i)} for i in range(n)]


def scripted(right: Collection[int], name: str) -> FunctionModel:
    """A scripted model right on exactly the rows in `right` (it reads the row's id from the prompt)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        qid = int(re.search(r"Question (\d+)", last_prompt(messages)).group(1))  # type: ignore[union-attr]
        await asyncio.sleep(0.001 * (qid % 3))
        yield f" {2 * qid} " if qid in right else f"{2 * qid + 1}"

    return FunctionModel(stream_function=stream, model_name=name)


async def two_models() -> Any:
    return await compare(TEMPLATE, models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], over=rows(),
                         expect={"answer": "gold"}, journal=False)


async def test_each_models_pass_rate_is_exact_in_summary_and_frames() -> None:
    result = await two_models()
    numbers = result.summary()
    assert list(numbers) == ["a", "b"]
    assert (numbers["a"]["passed"], numbers["a"]["scored"]) == (20, 30)
    assert (numbers["b"]["passed"], numbers["b"]["scored"]) == (24, 30)
    assert numbers["a"]["failures"] == sorted(set(range(30)) - RIGHT_A)
    assert numbers["b"]["failures"] == sorted(set(range(30)) - RIGHT_B)
    assert numbers["a"]["failed_runs"] == 0 and numbers["a"]["median_latency_s"] is not None
    long = result.to_pandas()
    assert long.groupby("model")["passed"].sum().to_dict() == {"a": 20, "b": 24}
    wide = result.to_pandas(wide=True)
    assert len(wide) == 30 and list(wide["passed"].columns) == ["a", "b"]
    assert [bool(v) for v in wide["passed"]["a"]] == [i in RIGHT_A for i in range(30)]
    assert [bool(v) for v in wide["passed"]["b"]] == [i in RIGHT_B for i in range(30)]
    assert list(wide["answer:equals"].columns) == ["a", "b"]
    table = result.model_table()
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "pass_rate"] == pytest.approx(20 / 30)
    assert table.loc["b", "pass_rate"] == pytest.approx(24 / 30)
    assert table.loc["b", "mean answer:equals"] == pytest.approx(24 / 30)
    assert table.loc["a", "cost_text"] == "—"  # a FunctionModel has no price: unknown, never $0


async def test_the_selection_cells_name_each_models_numbers() -> None:
    result = await two_models()
    from agentcell.batch.by_model import selection

    header, body = selection_cells(selection({n: r.rows for n, r in result.results.items()}))
    assert header == ["model", "pass rate", "mean answer:equals", "cost", "median latency", "failed runs"]
    assert [cells[:3] for cells in body] == [["a", "20/30 (66.7%)", "0.667"], ["b", "24/30 (80.0%)", "0.8"]]
    assert [cells[3] for cells in body] == ["—", "—"] and [cells[5] for cells in body] == ["0", "0"]


def test_cost_text_marks_a_partial_total_and_an_unknown_one() -> None:
    assert cost_text(0.012, complete=True) == "$0.012"
    assert cost_text(0.012, complete=False) == "~$0.012"
    assert cost_text(None, complete=False) == "—"


async def test_expect_without_rows_is_one_clear_sentence() -> None:
    with pytest.raises(AgentcellError, match="pass over=rows too"):
        compare(TEMPLATE, models=["offline"], expect={"answer": "gold"})  # type: ignore[call-overload]
