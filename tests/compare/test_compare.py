"""`agentcell.compare`: one run per model, all at once; Stop one or all; every model's own result."""

from __future__ import annotations

import asyncio

import pytest

from agentcell import compare, diff
from agentcell.batch.compare import RECORD_COLUMNS
from agentcell.batch.entrants import cassette_for

from .conftest import Counted, Tools

pytestmark = pytest.mark.anyio

TEMPLATE = "Find it. [[answer|use_tools=true]]"


async def settle(*models: Counted) -> None:
    """Let the loop run until each model has a request in flight (no sleeps: the loop's own turns)."""
    while not all(m.in_flight for m in models):
        await asyncio.sleep(0)


def models_() -> tuple[Counted, Counted, Counted]:
    return Counted("careful", rounds=2), Counted("hasty", rounds=0), Counted("looping", rounds=3)


async def test_three_models_run_concurrently_and_each_gets_exactly_its_own_run() -> None:
    models, tools = models_(), Tools()
    before = asyncio.all_tasks()
    gate = asyncio.Event()
    for m in models:
        m.gate = gate
    comparison = compare(TEMPLATE, models=[m.model() for m in models], tools=[tools.lookup_tool()], journal=False)
    await settle(*models)
    assert [m.in_flight for m in models] == [1, 1, 1]  # the three first requests are in flight together
    gate.set()
    await comparison
    assert [len(m.requests) for m in models] == [3, 1, 4]  # each model asked only for its own run
    results = comparison.results
    assert list(results) == ["careful", "hasty", "looping"]
    assert results["careful"].answer == "careful read: result for item 1"
    assert results["hasty"].answer == "hasty read: nothing" and results["hasty"].usage.tool_calls == 0
    assert asyncio.all_tasks() - before == set()  # no task left


async def test_stop_in_one_column_stops_only_that_model_and_stop_all_stops_the_rest() -> None:
    models, tools = models_(), Tools()
    before = asyncio.all_tasks()
    gate = asyncio.Event()
    for m in models:
        m.gate = gate
    comparison = compare(TEMPLATE, models=[m.model() for m in models], tools=[tools.lookup_tool()], journal=False)
    await settle(*models)
    comparison.cancel("hasty")
    await comparison.runs["hasty"].wait()
    assert comparison.status("hasty") == "stopped"
    assert comparison.status("careful") == comparison.status("looping") == "running"
    comparison.cancel()
    await comparison
    assert {n: r.status for n, r in comparison.results.items()} == {
        "careful": "stopped", "hasty": "stopped", "looping": "stopped"}
    assert asyncio.all_tasks() - before == set()  # no task left


async def test_a_model_that_cannot_start_fails_alone_and_says_why() -> None:
    careful, tools = Counted("careful", rounds=1), Tools()
    comparison = compare(TEMPLATE, models=[careful.model(), "nosuchprovider:model-x"],
                         tools=[tools.lookup_tool()], journal=False)
    await comparison
    results = comparison.results
    assert results["careful"].status == "completed"
    assert results["nosuchprovider:model-x"].status == "failed"
    assert "nosuchprovider" in (results["nosuchprovider:model-x"].error or "")


async def test_records_are_one_row_per_model_and_slot_with_usage_and_latency() -> None:
    models, tools = models_(), Tools()
    comparison = await compare("Find it. [[answer|use_tools=true]] Then say ok. [[ok]]",
                               models=[m.model() for m in models], tools=[tools.lookup_tool()], journal=False)
    records = comparison.to_records()
    assert [(r["model"], r["slot"]) for r in records] == [
        (m, s) for m in ("careful", "hasty", "looping") for s in ("answer", "ok")]
    assert tuple(records[0]) == RECORD_COLUMNS
    careful = records[0]
    assert careful["tool_calls"] == 2 and careful["requests"] == len(models[0].requests) and careful["latency_s"] >= 0
    frame = comparison.to_pandas()
    assert list(frame.columns) == list(RECORD_COLUMNS) and len(frame) == 6


async def test_diff_of_two_compared_models_says_where_they_first_differ() -> None:
    careful, hasty, tools = Counted("careful", rounds=2), Counted("hasty", rounds=0), Tools()
    comparison = await compare(TEMPLATE, models=[careful.model(), hasty.model()], tools=[tools.lookup_tool()],
                               journal=False)
    d = diff(comparison.results["careful"], comparison.results["hasty"])
    assert d["first_difference"] == {"slot": "answer", "round": 1, "part": "tool call",
                                     "a": 'lookup({"q": "item 0"})', "b": None} or d["first_difference"]["round"] == 1
    assert d["rounds"] == {"a": 3, "b": 1} and d["tool_calls"] == {"a": 2, "b": 0}
    assert d["slots"][0]["same"] is False
    assert "first differ in [[answer]] round 1" in repr(d) and "(differs)" in d._repr_html_()


async def test_a_fork_and_its_original_differ_at_the_edited_result() -> None:
    model, tools = Counted("m", rounds=2), Tools()
    comparison = await compare(TEMPLATE, models=[model.model()], tools=[tools.lookup_tool()], journal=False)
    first = comparison.results["m"]
    forked = await first.fork(2, tool_results={"c1": "EDITED"})
    d = diff(first, forked)
    assert d["first_difference"] == {"slot": "answer", "round": 2, "part": "tool result",
                                     "a": "lookup: result for item 1", "b": "lookup: EDITED"}
    assert d["b"]["forked_from"] == first.run_id and "b is forked from" in repr(d)


def test_each_model_has_its_own_cassette() -> None:
    assert cassette_for("runs/demo.json", "openai:gpt-4o-mini") == "runs/demo.openai-gpt-4o-mini.json"
    assert cassette_for("demo.json", "careful") != cassette_for("demo.json", "hasty")


async def test_over_rows_gives_one_row_per_input_row_and_model() -> None:
    careful, hasty, tools = Counted("careful", rounds=1), Counted("hasty", rounds=0), Tools()
    compared = compare("Item {{ item }}: find it. [[answer|use_tools=true]]", models=[careful.model(), hasty.model()],
                       over=["a", "b", "c"], tools=[tools.lookup_tool()], journal=False, concurrency=2)
    result = await compared
    records = result.to_records()
    assert [(r["row"], r["model"]) for r in records] == [
        (0, "careful"), (0, "hasty"), (1, "careful"), (1, "hasty"), (2, "careful"), (2, "hasty")]
    assert {r["answer"] for r in records if r["model"] == "careful"} == {"careful read: result for item 0"}
    assert len(careful.requests) == 6 and len(hasty.requests) == 3  # each model ran every row, only its own
    frame = result.to_pandas()
    assert frame.groupby("model")["tool_calls"].sum().to_dict() == {"careful": 3, "hasty": 0}
