"""`map(template, rows, models=[A, B])`: the batch a user knows, once per model, as `compare(..., over=rows)` does."""

from __future__ import annotations

from typing import Any

import pytest

from agentcell import AgentcellError
from agentcell.batch import ComparedBatch, ComparedBatchResult, compare, map

from .test_models_scores import RIGHT_A, RIGHT_B, TEMPLATE, rows, scripted

pytestmark = pytest.mark.anyio


async def test_map_with_models_is_compare_over_the_rows() -> None:
    batch = map(TEMPLATE, rows(), models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], expect={"answer": "gold"},
                journal=False)
    assert isinstance(batch, ComparedBatch) and batch.models == ("a", "b")
    result = await batch
    assert isinstance(result, ComparedBatchResult)
    same = await compare(TEMPLATE, models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], over=rows(),
                         expect={"answer": "gold"}, journal=False)
    timeless = [{m: {k: v for k, v in n.items() if k != "median_latency_s"} for m, n in r.summary().items()}
                for r in (result, same)]
    assert timeless[0] == timeless[1]
    assert result.to_pandas()[["row", "model", "answer", "passed"]].equals(
        same.to_pandas()[["row", "model", "answer", "passed"]])
    assert {m: n["passed"] for m, n in result.summary().items()} == {"a": 20, "b": 24}
    assert list(result.model_table().index) == ["a", "b"]


async def test_map_passes_names_and_its_own_batch_settings_to_every_model() -> None:
    batch = map(TEMPLATE, rows(4), models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], names=["first", "second"],
                keep=True, concurrency=1, max_rows=3, journal=False)
    result = await batch
    assert list(result.results) == ["first", "second"]
    frame = result.to_pandas()
    assert len(frame) == 6 and "question" in frame.columns  # max_rows and keep reached each model's batch
    assert all(b.settings.concurrency == 1 for b in batch.batches.values())


async def test_one_model_in_models_is_still_a_comparison() -> None:
    result = await map(TEMPLATE, rows(3), models=[scripted(RIGHT_A, "a")], expect={"answer": "gold"}, journal=False)
    assert isinstance(result, ComparedBatchResult) and list(result.summary()) == ["a"]
    assert result.summary()["a"]["passed"] == 2  # rows 0 and 1 of 0..2


@pytest.mark.parametrize(("keywords", "sentence"), [
    ({"model": "offline", "models": ["offline:fast"]},
     "pass model= for one model or models=[...] for several, not both"),
    ({"names": ["x"]}, "names= names the models of models=[...]; pass models= too (or drop names=)"),
    ({"models": "offline,offline:fast"},
     "models= takes a list of models (['offline', 'openai:gpt-4o-mini']), got str"),
    ({"models": ["offline"], "baseline": object()},
     "baseline= compares a batch with an earlier one on one model; with models= the models' scores are side by "
     "side already"),
    ({"models": ["offline"], "client": object()},
     "client= runs one batch on Dask; with models= each model's batch runs in this kernel"),
])
async def test_what_models_cannot_take_is_one_sentence(keywords: dict[str, Any], sentence: str) -> None:
    with pytest.raises(AgentcellError) as caught:
        map(TEMPLATE, rows(2), journal=False, **keywords)
    assert str(caught.value) == sentence


async def test_resume_gives_each_model_its_own_rows_only(tmp_path: Any) -> None:
    """Every model's batch journals its rows apart: a resumed comparison never scores one model on another's answers
    (they once shared the template's manifest, and a model right on no row was resumed to the other's pass rate)."""
    first = await map(TEMPLATE, rows(6), models=[scripted(RIGHT_A, "a")], expect={"answer": "gold"}, journal=tmp_path)
    assert first.summary()["a"]["passed"] == 4
    wrong = scripted(set(), "b")  # right on no row
    both = await map(TEMPLATE, rows(6), models=[scripted(RIGHT_A, "a"), wrong], expect={"answer": "gold"},
                     journal=tmp_path, resume=True)
    assert [r.resumed for r in both.results["a"].rows] == [True] * 6  # a's own rows, from its first batch
    assert [r.resumed for r in both.results["b"].rows] == [False] * 6
    assert {m: n["passed"] for m, n in both.summary().items()} == {"a": 4, "b": 0}
