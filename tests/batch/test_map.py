"""`agentcell.map`: rows run concurrently on the loop, results come back in row order, failures stay in their row."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentcell.batch import BatchError, map
from agentcell.tools import readonly

from .conftest import Shouter, calling

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"
WORDS = [f"w{i:03d}" for i in range(200)]


@pytest.mark.slow  # 600 runs
@pytest.mark.parametrize("concurrency", [1, 8, 64], ids=["c1", "c8", "c64"])
async def test_200_rows_give_the_same_results_in_row_order(concurrency: int) -> None:
    model = Shouter()
    batch = map(TEMPLATE, WORDS, model=model.model, concurrency=concurrency, journal=False)
    result = await batch
    assert [r["answer"] for r in result.to_records()] == [w.upper() for w in WORDS]
    assert [r["status"] for r in result.to_records()] == ["completed"] * 200
    assert result.status == "completed" and result.reason is None
    assert model.requests == 200
    assert model.most_running <= concurrency
    if concurrency > 1:
        assert model.most_running > 1  # rows really overlapped


async def test_async_iteration_yields_every_row_as_it_finishes() -> None:
    batch = map(TEMPLATE, WORDS[:30], model=Shouter().model, concurrency=8, journal=False)
    seen = [row.index async for row in batch]
    assert sorted(seen) == list(range(30))
    assert seen != list(range(30))  # finish order, not input order (the model's pauses are random)


async def test_a_failing_row_is_failed_in_its_row_and_the_rest_finish() -> None:
    result = await map(TEMPLATE, WORDS[:20], model=Shouter(fail_on="w007").model, concurrency=4, journal=False)
    records = result.to_records()
    assert [r["status"] for r in records].count("completed") == 19
    assert records[7]["status"] == "failed"
    assert records[7]["answer"] is None
    assert "the model cannot shout w007" in records[7]["error"]
    assert result.status == "completed"


async def test_a_row_whose_tool_raises_is_failed_and_the_rest_finish() -> None:
    @readonly
    def fetch(word: str) -> str:
        """Fetch the page for a word."""
        if word == "w003":
            raise ValueError("page w003 is gone")
        return f"page of {word}"

    def answer(returns: list[str]) -> str:
        if returns[-1].startswith("error:") or "ValueError" in returns[-1]:
            raise RuntimeError(f"cannot extract: {returns[-1]}")
        return returns[-1].upper()

    template = "SHOUT: {{ item }} [[answer|use_tools=true]]"
    result = await map(template, WORDS[:8], model=calling("fetch", "word", then=answer), tools=[fetch],
                       concurrency=3, journal=False)
    statuses = [r.status for r in result.rows]
    assert statuses == ["completed"] * 3 + ["failed"] + ["completed"] * 4
    assert "ValueError: page w003 is gone" in (result.rows[3].error or "")
    assert result.rows[4].results == {"answer": "PAGE OF W004"}


async def test_keep_puts_the_input_columns_first() -> None:
    rows = [{"name": "ada", "word": "hi"}, {"name": "bob", "word": "yo"}]
    result = await map("SHOUT: {{ word }} [[answer]]", rows, model=Shouter().model, keep=True, journal=False)
    frame = result.to_pandas()
    assert list(frame.columns) == ["name", "word", "answer", "status", "error", "requests", "tool_calls",
                                   "input_tokens", "output_tokens", "cost", "run_id"]
    assert frame[["name", "answer", "status"]].values.tolist() == [["ada", "HI", "completed"], ["bob", "YO", "completed"]]
    plain = (await map("SHOUT: {{ word }} [[answer]]", rows, model=Shouter().model, journal=False)).to_pandas()
    assert list(plain.columns)[:2] == ["answer", "status"]


async def test_cancel_stops_running_rows_and_never_starts_pending_ones() -> None:
    model = Shouter(pause=0.2, seed=1)
    batch = map(TEMPLATE, WORDS[:100], model=model.model, concurrency=10, journal=False)
    while sum(r.status == "completed" for r in batch.rows) < 10:
        await asyncio.sleep(0.01)
    batch.cancel()
    result = await batch
    counts = result.counts
    assert result.status == "stopped" and result.reason == "stopped"
    assert counts.get("not_started", 0) >= 70
    assert counts["completed"] + counts.get("stopped", 0) + counts["not_started"] == 100
    # A row stopped before its request went out never reached the model; none is left streaming.
    assert model.requests <= counts["completed"] + counts["stopped"]
    assert model.running == 0
    assert not [t for t in asyncio.all_tasks() if (t.get_name() or "").startswith("agentcell-")]


async def test_max_rows_takes_the_first_rows() -> None:
    result = await map(TEMPLATE, WORDS, model=Shouter().model, max_rows=5, journal=False)
    assert [r.results["answer"] for r in result.rows] == ["W000", "W001", "W002", "W003", "W004"]


async def test_bad_rows_fail_before_any_row_starts() -> None:
    model = Shouter()
    with pytest.raises(BatchError, match=r"^row 1 has no 'word', which the template reads as \{\{ word \}\} "
                                         r"\(the row's fields: other; the notebook does not define it either\)$"):
        map("SHOUT: {{ word }} [[answer]]", [{"word": "a"}, {"other": "b"}], model=model.model, journal=False)
    with pytest.raises(BatchError, match=r"^--over must be a DataFrame, a list of dicts, a list of strings or a glob "
                                         r"of files; got a int$"):
        map(TEMPLATE, 42, model=model.model, journal=False)
    assert model.requests == 0


def test_map_takes_every_run_option_but_the_per_run_ones_then_the_batch_options() -> None:
    import dataclasses
    import inspect

    from agentcell.options import RunOptions

    params = list(inspect.signature(map).parameters.values())
    assert [p.name for p in params[:2]] == ["template", "rows"]
    per_run = {"history", "run_id", "resume_from", "cost_limit", "step", "predict"}  # one run's (or stepped by a person), not every row's
    fields = [f.name for f in dataclasses.fields(RunOptions) if f.name not in per_run]
    batch = ["concurrency", "max_rows", "max_cost", "keep", "resume", "client", "expect", "evaluators", "baseline",
             "models", "names"]
    assert [p.name for p in params[2:]] == fields + batch
    defaults = RunOptions()
    for p in params[2 : 2 + len(fields)]:
        assert p.default == getattr(defaults, p.name), p.name


async def test_the_batch_usage_of_running_rows_reads_no_transcript(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch's progress reads `usage` on every flush: the running rows' totals come from their runs as
    announced (`Run.usage`), equal to their transcripts' totals, without reducing a transcript."""
    from agentcell.engine.eventlog import EventLog

    reductions: list[int] = []
    reduce = EventLog._reduce
    monkeypatch.setattr(EventLog, "_reduce", lambda self: (reductions.append(1), reduce(self))[1])

    @readonly
    async def fetch(word: str) -> str:
        """Fetch the page for a word."""
        await asyncio.sleep(0.02)  # the row runs on after its first request's usage is known
        return f"page of {word}"

    model = calling("fetch", "word", then=lambda returns: returns[-1].upper())
    batch = map("SHOUT: {{ item }} [[answer|use_tools=true]]", WORDS[:24], model=model, tools=[fetch], concurrency=8,
                journal=False)
    compared = 0
    while not batch.done:
        await asyncio.sleep(0.005)
        reductions.clear()
        usage = batch.usage
        assert reductions == []
        with_transcripts = batch._spent
        for run in list(batch.runs.values()):
            with_transcripts = with_transcripts + run.transcript.usage
        if batch.runs and usage.requests > batch._spent.requests:
            assert usage == with_transcripts
            compared += 1
    assert compared > 0  # some samples caught rows that had spent something and were still running
    result = await batch
    assert batch.usage == result.usage and result.usage.requests == 48 and result.usage.tool_calls == 24


async def test_an_in_kernel_batch_starts_each_row_from_the_previous_rows_end_without_a_task_of_its_own() -> None:
    """Rows are engine runs started from the end of the row before (`Batch._fill`): no driver task and no
    task per row, whose wake-ups would each cost a loop turn between one row's end and the next one's start."""
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Future[Any]] = []
    factory = loop.get_task_factory()

    def recording(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs) if factory is None else factory(loop, coro, **kwargs)
        tasks.append(task)  # named by `create_task` after the factory returns: read the names at the end
        return task

    loop.set_task_factory(recording)  # type: ignore[arg-type]
    try:
        result = await map(TEMPLATE, WORDS[:40], model=Shouter().model, concurrency=4, journal=False)
    finally:
        loop.set_task_factory(factory)
    names = [t.get_name() for t in tasks if isinstance(t, asyncio.Task)]
    assert [r.status for r in result.rows] == ["completed"] * 40
    assert not [n for n in names if n.startswith(("agentcell-batch-row", "agentcell-batch-driver"))]
    assert sum(n.startswith("agentcell-run-") for n in names) == 40
    assert names.count("agentcell-batch") == 1


async def test_stop_during_a_shared_pause_ends_the_batch_at_once_with_nothing_left_waiting() -> None:
    """A 429's pause holds back every row not yet started; a Stop in it ends the batch without waiting
    the pause out, and the task that waited for it is gone."""
    batch = map(TEMPLATE, WORDS[:6], model=Shouter().model, concurrency=2, journal=False)
    batch.throttle.rate_limited(30.0)  # before the batch's first step: no row may start for 30 s
    await asyncio.sleep(0.05)
    assert [r.status for r in batch.rows] == ["pending"] * 6
    waiting = [t for t in asyncio.all_tasks() if t.get_name() == "agentcell-batch-pause"]
    assert len(waiting) == 1
    batch.cancel()
    result = await asyncio.wait_for(batch.wait(), 5)
    assert [r.status for r in result.rows] == ["not_started"] * 6 and result.status == "stopped"
    await asyncio.sleep(0)
    assert waiting[0].done()


async def test_rows_that_fail_as_they_start_fail_one_by_one_without_nesting(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row whose run cannot start is failed where it was to start, and the next one is tried in the same
    loop: 3,000 such rows nest no calls (a recursion through each row's end would pass Python's limit)."""
    from agentcell.batch import runner as batch_runner

    class Refusing:
        def start(self, **_kwargs: Any) -> Any:
            raise RuntimeError("no run today")

    monkeypatch.setattr(batch_runner, "prepare", lambda *_a, **_k: Refusing())
    words = [f"w{i}" for i in range(3000)]
    result = await asyncio.wait_for(map(TEMPLATE, words, model=Shouter().model, concurrency=8, journal=False), 30)
    assert {r.status for r in result.rows} == {"failed"}
    assert result.rows[2999].error == "RuntimeError: no run today"


async def test_a_watcher_that_raises_stops_the_batch_instead_of_leaving_it_waiting() -> None:
    """Rows start from callbacks, whose exceptions the loop would only log: one from a row's start stops
    the batch, which still ends, its running rows stopped and the rest not started."""
    batch = map(TEMPLATE, WORDS[:30], model=Shouter().model, concurrency=4, journal=False)
    seen: list[str] = []

    def watcher(row: Any) -> None:
        seen.append(row.status)
        if row.index == 9 and row.status == "running":
            raise ValueError("the view broke")

    batch.watch(watcher)
    result = await asyncio.wait_for(batch.wait(), 10)
    assert result.status == "stopped"
    assert result.reason is not None and "ValueError: the view broke" in result.reason
    assert {r.status for r in result.rows[10:]} == {"not_started"}
    assert all(r.finished for r in result.rows)


async def test_two_followers_each_see_every_row_once() -> None:
    batch = map(TEMPLATE, WORDS[:40], model=Shouter().model, concurrency=8, journal=False)

    async def follow() -> list[int]:
        return [row.index async for row in batch]

    first, second = await asyncio.gather(follow(), follow())
    assert sorted(first) == sorted(second) == list(range(40))
    assert [row.index async for row in batch] == first  # a follower after the end reads them in the same order


async def test_a_toolset_serves_every_row() -> None:
    """`toolsets=` reaches each row's slots: one toolset the user built, shared by the rows."""
    from pydantic_ai.toolsets import FunctionToolset

    fetched: list[str] = []

    async def fetch(word: str) -> str:
        """Fetch the page for a word."""
        fetched.append(word)
        return f"page of {word}"

    template = "SHOUT: {{ item }} [[answer|use_tools=true]]"
    result = await map(template, WORDS[:6], model=calling("fetch", "word", then=lambda r: r[-1].upper()),
                       toolsets=[FunctionToolset([fetch])], concurrency=3, journal=False)
    assert [r.results for r in result.rows] == [{"answer": f"PAGE OF {w.upper()}"} for w in WORDS[:6]]
    assert sorted(fetched) == WORDS[:6]
