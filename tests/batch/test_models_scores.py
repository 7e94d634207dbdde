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
    assert list(dict.fromkeys(wide.columns.get_level_values(0))) == list(result.results["a"].to_pandas().columns)
    assert wide[("answer", "b")][7].strip() == "14" and wide[("answer", "a")][2] == "5"
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
    with pytest.raises(AgentcellError, match=r"^expect answer=nope: no row has a column 'nope'"):  # no model's fault
        compare(TEMPLATE, models=["offline", "offline:fast"], over=rows(), expect={"answer": "nope"})


async def test_the_widget_state_and_the_saved_output_show_each_models_pass_rate() -> None:
    from agentcell.frontends.widget.models_view import ModelsWidget, static_bundle

    compared = compare(TEMPLATE, models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], over=rows(),
                       expect={"answer": "gold"}, journal=False)
    view = ModelsWidget(compared, flush_interval=0.01)
    assert view.state["status"] == "running"
    await asyncio.gather(*(b.task for b in compared.batches.values()))  # the view's done callbacks came first
    state = view.state
    assert state["status"] == "completed" and state["models"] == ["a", "b"]
    assert [cells[:2] for cells in state["selection"]["body"]] == [["a", "20/30 (66.7%)"], ["b", "24/30 (80.0%)"]]
    assert [row["cells"]["a"]["passed"] for row in state["rows"]] == [i in RIGHT_A for i in range(30)]
    assert [row["cells"]["b"]["passed"] for row in state["rows"]] == [i in RIGHT_B for i in range(30)]
    assert state["rows"][7]["expected"] == {"answer": "14"}
    saved = static_bundle(compared)
    assert "a | 20/30 (66.7%) | 0.667 | — |" in saved["text/plain"]
    assert "b | 24/30 (80.0%) | 0.8 | — |" in saved["text/plain"]
    assert "\n2 | 2 | 4 | ✗ 5 | ✗ 5\n" in saved["text/plain"]  # row 2 (its input qid=2): neither model is right
    assert "\n6 | 6 | 12 | ✓ 12 | ✓ 12\n" in saved["text/plain"]
    assert "<td>20/30 (66.7%)</td>" in saved["text/html"] and "<caption>Model selection</caption>" in saved["text/html"]


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.user_ns.update(qs=rows(), a=scripted(RIGHT_A, "a"), b=scripted(RIGHT_B, "b"))
    yield shell
    shell.run_line_magic("agent", "stop")


async def test_the_magic_scores_every_model_and_shows_them_side_by_side(ip: Any) -> None:
    from agentcell.batch import ComparedBatch
    from agentcell.frontends.widget.models_view import ModelsWidget

    ip.run_cell_magic("agent", "--over qs --models a,b --expect answer=gold -o c", TEMPLATE)
    compared = ip.user_ns["c"]
    assert isinstance(compared, ComparedBatch) and isinstance(compared.view, ModelsWidget)
    result = await compared
    assert {m: n["passed"] for m, n in result.summary().items()} == {"a": 20, "b": 24}
    await asyncio.gather(*(b.task for b in compared.batches.values()))  # the view's done callbacks came first
    assert [cells[1] for cells in compared.view.state["selection"]["body"]] == ["20/30 (66.7%)", "24/30 (80.0%)"]


async def test_the_magic_says_what_is_wrong_with_scores_per_model(ip: Any) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="add --over ROWS"):
        ip.run_cell_magic("agent", "--models a,b --expect answer=gold", TEMPLATE)
    with pytest.raises(UsageError, match="drop --baseline"):
        ip.run_cell_magic("agent", "--over qs --models a,b --expect answer=gold --baseline last", TEMPLATE)
    with pytest.raises(UsageError, match="gold"):  # a column the rows lack: one line, before any row runs
        ip.run_cell_magic("agent", "--over qs --models a,b --expect answer=nope", TEMPLATE)


async def test_report_gives_each_model_its_own_evaluation_report() -> None:
    from .test_evals_report import evals

    reporting = evals("reporting")
    reports = (await two_models()).report(name="doubling")
    assert list(reports) == ["a", "b"]
    assert all(isinstance(r, reporting.EvaluationReport) for r in reports.values())
    assert reports["a"].name == "doubling: a"
    passed = {m: sum(c.assertions["equals"].value for c in r.cases) for m, r in reports.items()}
    assert passed == {"a": 20, "b": 24}


async def test_the_widget_shows_the_pass_rates_live_while_rows_finish() -> None:
    from agentcell.frontends.widget.models_view import ModelsWidget

    compared = compare(TEMPLATE, models=[scripted(RIGHT_A, "a"), scripted(RIGHT_B, "b")], over=rows(),
                       expect={"answer": "gold"}, journal=False, concurrency=2)
    view = ModelsWidget(compared, flush_interval=0.005)
    seen: list[dict[str, Any]] = []
    view.observe(lambda change: seen.append(change["new"]), names="state")
    await asyncio.gather(*(b.task for b in compared.batches.values()))
    live = [s for s in seen if s["status"] == "running" and any(0 < t["scored"] < 30 for t in s["table"])]
    assert live, "no state was sent while rows were finishing"
    assert seen[-1]["status"] == "completed" and [t["passed"] for t in seen[-1]["table"]] == [20, 24]
