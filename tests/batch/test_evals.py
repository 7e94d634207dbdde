"""Scores per row: expected columns, evaluators, the summary, the table's score columns, regressions."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Collection
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell.batch import BatchError, map
from agentcell.batch.expect import same

from .conftest import last_prompt

pytestmark = pytest.mark.anyio

TEMPLATE = "Question {{ qid }}: {{ question }} [[answer]]"


def rows(n: int = 30) -> list[dict[str, Any]]:
    return [{"qid": i, "question": f"what is {i} + {i}?", "gold": str(2 * i)} for i in range(n)]


def grader(right: Collection[int]) -> FunctionModel:
    """A scripted model right on exactly the rows in `right` (it reads the row's id from the prompt)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        qid = int(re.search(r"Question (\d+)", last_prompt(messages)).group(1))  # type: ignore[union-attr]
        await asyncio.sleep(0.001 * (qid % 3))
        yield f" {2 * qid} " if qid in right else f"{2 * qid + 1}"

    return FunctionModel(stream_function=stream, model_name="grader")


RIGHT_20 = set(range(0, 30, 3)) | set(range(1, 30, 3))  # 20 of 30
RIGHT_24 = set(range(6, 30))  # 24 of 30: 4 rows newly right, 0..5 wrong


async def test_pass_rate_20_of_30_in_summary_and_table() -> None:
    result = await map(TEMPLATE, rows(), model=grader(RIGHT_20), expect={"answer": "gold"}, journal=False)
    numbers = result.summary()
    assert (numbers["passed"], numbers["scored"]) == (20, 30)
    assert numbers["pass_rate"] == pytest.approx(20 / 30)
    assert numbers["failures"] == sorted(set(range(30)) - RIGHT_20)
    assert numbers["mean"]["by_column"] == {"answer:equals": pytest.approx(20 / 30)}
    frame = result.to_pandas()
    assert list(frame.columns[-2:]) == ["passed", "answer:equals"]
    assert int(frame["passed"].sum()) == 20
    assert [bool(v) for v in frame["passed"]] == [i in RIGHT_20 for i in range(30)]


async def test_a_second_batch_reports_exactly_the_improved_and_regressed_rows() -> None:
    first = await map(TEMPLATE, rows(), model=grader(RIGHT_20), expect={"answer": "gold"}, journal=False)
    second = await map(TEMPLATE, rows(), model=grader(RIGHT_24), expect={"answer": "gold"}, journal=False,
                       baseline=first)
    improved = sorted(RIGHT_24 - RIGHT_20)
    regressed = sorted(RIGHT_20 - RIGHT_24)
    comparison = second.compare(first)
    assert comparison.improved == improved and comparison.regressed == regressed
    assert comparison.unchanged == sorted(set(range(30)) - set(improved) - set(regressed))
    assert second.comparison is not None and second.comparison.improved == improved
    assert second.summary()["baseline"]["line"] == f"{len(improved)} improved, {len(regressed)} regressed, " \
        f"{30 - len(improved) - len(regressed)} unchanged"
    changed = comparison.to_pandas()
    assert list(changed["row"]) == sorted(improved + regressed)
    row = changed.set_index("row").loc[regressed[0]]
    assert row["change"] == "regressed" and row["passed_before"] and not row["passed_now"]
    assert row["answer_before"].strip() == str(2 * regressed[0]) and row["answer_now"] == str(2 * regressed[0] + 1)


async def test_rows_are_matched_by_content_not_position() -> None:
    first = await map(TEMPLATE, rows(), model=grader(RIGHT_20), expect={"answer": "gold"}, journal=False)
    shuffled = list(reversed(rows()))
    second = await map(TEMPLATE, shuffled, model=grader(RIGHT_20), expect={"answer": "gold"}, journal=False)
    comparison = second.compare(first)
    assert comparison.improved == comparison.regressed == [] and len(comparison.unchanged) == 30


async def test_an_evaluator_that_raises_on_row_7_marks_only_that_score() -> None:
    def picky(output: Any, expected: Any, row: dict[str, Any]) -> bool:
        if row["qid"] == 7:
            raise ValueError("cannot judge row 7")
        return bool(output.strip() == expected)

    def length(output: Any, expected: Any, row: dict[str, Any]) -> float:
        return float(len(output.strip()))

    result = await map(TEMPLATE, rows(), model=grader(range(30)), expect={"answer": "gold"},
                       evaluators=[picky, length], journal=False)
    assert result.counts == {"completed": 30}
    seven = result.rows[7]
    by_name = {s.name: s for s in seven.scores}
    assert by_name["picky"].error == "ValueError: cannot judge row 7" and by_name["picky"].value is None
    assert by_name["length"].value == 2.0 and by_name["length"].error is None
    assert seven.passed is None
    others = [r for r in result.rows if r.index != 7]
    assert all(r.passed is True for r in others)
    numbers = result.summary()
    assert numbers["errors"] == [7] and numbers["passed"] == 29 and numbers["evaluator_errors"] == {"answer:picky": 1}
    assert result.to_pandas().loc[7, "answer:picky"] == "error"


async def test_async_evaluators_score_every_row_before_the_result() -> None:
    seen: list[int] = []

    async def slow(output: Any, expected: Any, row: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0.002)
        seen.append(row["qid"])
        return {"exact": output.strip() == expected, "words": len(output.split())}

    batch = map(TEMPLATE, rows(12), model=grader(range(6)), expect={"answer": "gold"}, evaluators=[slow],
                journal=False, concurrency=4)
    yielded = [row async for row in batch]
    assert all(row.scores for row in yielded)  # `async for` yields a row once it is scored
    result = await batch
    assert sorted(seen) == list(range(12))
    assert [r.passed for r in result.rows] == [i < 6 for i in range(12)]
    assert result.score_columns == ["passed", "answer:exact", "answer:words"]


async def test_failed_rows_fail_their_checks_and_not_started_rows_are_not_scored() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if "Question 3:" in last_prompt(messages):
            raise RuntimeError("model down")
        yield "0"

    result = await map(TEMPLATE, rows(5), model=FunctionModel(stream_function=stream), expect={"answer": "gold"},
                       journal=False)
    three = result.rows[3]
    assert three.status == "failed" and three.passed is False
    assert three.scores[0].reason is not None and three.scores[0].reason.startswith("the row failed")
    assert result.rows[0].passed is True  # gold "0"


async def test_rows_without_a_label_are_not_scored_by_the_default_check() -> None:
    data = rows(4)
    data[2]["gold"] = None
    result = await map(TEMPLATE, data, model=grader(range(4)), expect={"answer": "gold"}, journal=False)
    assert [r.passed for r in result.rows] == [True, True, None, True]
    assert result.summary()["scored"] == 3


async def test_bad_expectations_fail_before_any_row_starts() -> None:
    with pytest.raises(BatchError, match="no row has a column 'gld'"):
        map(TEMPLATE, rows(3), model=grader(()), expect={"answer": "gld"}, journal=False)
    with pytest.raises(BatchError, match="expect names slot 'reply'"):
        map(TEMPLATE, rows(3), model=grader(()), expect={"reply": "gold"}, journal=False)
    with pytest.raises(BatchError, match="evaluator 0 is a int"):
        map(TEMPLATE, rows(3), model=grader(()), evaluators=[3], journal=False)


def test_the_default_check_is_type_aware() -> None:
    assert same(" Paris\n", "paris") and same("New   York", "new york")
    assert same(3.0000001, 3) and same("42", 42) and not same(3.1, 3)
    assert same(True, "yes") and not same(False, "true")
    assert same("positive", "positive", "pick") and not same("Positive", "positive", "pick")
    assert same([1, "A "], [1.0, "a"]) and same({"x": 2}, {"x": 2.0}) and not same({"x": 2}, {"y": 2})


async def test_a_batch_without_expectations_has_no_score_columns() -> None:
    result = await map(TEMPLATE, rows(3), model=grader(range(3)), journal=False)
    assert result.score_columns == [] and "passed" not in result.to_pandas().columns


async def test_retry_runs_only_the_rows_that_did_not_complete() -> None:
    attempts: dict[int, int] = {}

    async def flaky(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        qid = int(re.search(r"Question (\d+)", last_prompt(messages)).group(1))  # type: ignore[union-attr]
        attempts[qid] = attempts.get(qid, 0) + 1
        if qid in (3, 5) and attempts[qid] == 1:
            raise RuntimeError("flaky")
        yield str(2 * qid)

    first = map(TEMPLATE, rows(8), model=FunctionModel(stream_function=flaky), expect={"answer": "gold"},
                journal=False)
    result = await first
    assert [r.index for r in result.rows if r.status == "failed"] == [3, 5]
    again = first.retry()
    second = await again
    assert attempts == {i: 2 if i in (3, 5) else 1 for i in range(8)}  # only the failed rows ran again
    assert second.counts == {"completed": 8} and second.summary()["passed"] == 8
    assert [r.resumed for r in second.rows] == [i not in (3, 5) for i in range(8)]
    assert second.rows[3].duration is not None and second.rows[0].duration == result.rows[0].duration


async def test_retry_refuses_a_batch_still_running() -> None:
    batch = map(TEMPLATE, rows(3), model=grader(range(3)), journal=False)
    with pytest.raises(BatchError, match="still running"):
        batch.retry()
    await batch


async def test_the_widget_shows_scores_summary_and_retries_in_place() -> None:
    from agentcell.frontends.widget.batch_view import BatchWidget

    batch = map(TEMPLATE, rows(6), model=grader({0, 1, 2}), expect={"answer": "gold"}, journal=False)
    view = BatchWidget(batch)
    sent: list[dict[str, Any]] = []
    view.send = sent.append  # type: ignore[method-assign]
    await batch
    view.flush()
    assert view.score_columns == ["answer:equals"]
    final = view.final
    assert final["summary"]["line"].startswith("3/6 passed (50.0%); 3 failed")
    row4 = final["rows"][4]
    assert row4["passed"] is False and row4["scores"] == {"answer:equals": False}
    assert row4["expected"] == {"answer": "8"} and row4["values"] == {"answer": "9"}
    assert row4["input_name"] == "qid" and row4["duration"] is not None
    view._dispatch({"kind": "retry"})  # every row completed: the new batch runs nothing again
    assert view.batch is not batch
    await view.batch
    assert all(r.resumed for r in view.batch.rows)
