""""Retry failed rows" in one model's batch widget, under the models' view: the model-selection table follows the
retried rows (pass rate, cost, latency of that model), and so do the comparison's result and its saved output."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell.batch.by_model import selection

from .conftest import last_prompt
from .test_models_scores import RIGHT_B, TEMPLATE, ip, rows, scripted

pytestmark = pytest.mark.anyio
__all__ = ["ip"]  # the shell fixture, shared

FLAKY = (3, 5, 8)


def flaky(name: str) -> tuple[FunctionModel, dict[int, int]]:
    """Right on every row, but rows `FLAKY` fail on their first attempt (a provider error)."""
    attempts: dict[int, int] = {}

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        qid = int(re.search(r"Question (\d+)", last_prompt(messages)).group(1))  # type: ignore[union-attr]
        attempts[qid] = attempts.get(qid, 0) + 1
        if qid in FLAKY and attempts[qid] == 1:
            raise RuntimeError("flaky")
        yield str(2 * qid)

    return FunctionModel(stream_function=stream, model_name=name), attempts


async def test_retrying_one_models_failed_rows_updates_the_models_table(ip: Any) -> None:
    model, attempts = flaky("a")
    ip.user_ns.update(qs=rows(12), a=model, b=scripted(RIGHT_B, "b"))
    ip.run_cell_magic("agent", "--over qs --models a,b --expect answer=gold -o c", TEMPLATE)
    compared = ip.user_ns["c"]
    await compared
    await asyncio.gather(*(b.task for b in compared.batches.values()))  # the views' done callbacks came first
    table = {row["model"]: row for row in compared.view.state["table"]}
    assert (table["a"]["passed"], table["a"]["failed_runs"]) == (9, 3)

    old = compared.batches["a"]
    old.view._dispatch({"kind": "retry"})  # the button in model a's batch widget
    retried = old.view.batch
    assert retried is not old
    await retried.task  # the views' done callbacks on the retried batch came first
    assert attempts == {i: 2 if i in FLAKY else 1 for i in range(12)}
    table = {row["model"]: row for row in compared.view.state["table"]}
    assert (table["a"]["passed"], table["a"]["scored"], table["a"]["failed_runs"]) == (12, 12, 0)
    (numbers,) = selection({"a": retried.rows})  # every number of the row: cost and median latency too
    assert table["a"] == numbers and numbers["median_latency_s"] is not None
    assert compared.view.state["status"] == "completed"
    assert compared.view.state["selection"]["body"][0][:2] == ["a", "12/12 (100.0%)"]
    from agentcell.frontends.widget.models_view import static_bundle

    assert "\na | 12/12 (100.0%) | 1 | — |" in static_bundle(compared)["text/plain"]
    assert compared.batches["a"] is retried  # the comparison's result follows the retry too
    assert (await compared).summary()["a"]["passed"] == 12
