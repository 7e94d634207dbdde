"""`%%agent --over` in a fresh in-process shell: the batch starts on the running loop, its widget
shows progress and rows, Stop and `%agent stop` stop everything, bad input is one line before any row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.batch import Batch, BatchResult
from agentcell.frontends.widget.batch_view import BatchWidget

from .conftest import Shouter

pytestmark = pytest.mark.anyio


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.user_ns["words"] = [f"w{i:02d}" for i in range(40)]
    shell.user_ns["shouter"] = Shouter(pause=0.01).model
    shell.user_ns["slow"] = Shouter(pause=0.5, seed=3).model
    yield shell
    shell.run_line_magic("agent", "stop")


def sent(widget: BatchWidget) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    widget.send = messages.append  # type: ignore[method-assign]
    return messages


async def test_over_runs_every_row_and_binds_the_batch(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--over words -m shouter -o b --concurrency 4", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["b"]
    assert isinstance(batch, Batch) and isinstance(batch.view, BatchWidget)
    result = await batch
    assert isinstance(result, BatchResult)
    assert [r["answer"] for r in result.to_records()] == [f"W{i:02d}" for i in range(40)]
    widget = batch.view
    assert widget.status == "completed"
    assert widget.final["progress"]["done"] == 40 and len(widget.final["rows"]) == 40
    assert widget.final["rows"][3]["values"] == {"answer": "W03"}
    assert widget.columns == ["answer"]


async def test_stop_from_the_widget_stops_everything(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--over words -m slow -o b --concurrency 5", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["b"]
    batch.view._on_frontend_msg(None, {"kind": "stop"}, [])
    result = await batch
    assert result.status == "stopped"
    assert result.counts.get("not_started", 0) >= 35
    assert batch.view.status == "stopped"
    assert batch.view.final["progress"]["not_started"] == result.counts["not_started"]


async def test_percent_agent_stop_stops_a_batch(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--over words -m slow -o b -q", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["b"]
    assert batch.view is None  # --quiet: no widget
    ip.run_line_magic("agent", "stop")
    assert (await batch).status == "stopped"


async def test_a_row_view_gets_that_rows_events_and_its_stop(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--over words -m slow -o b --concurrency 2", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["b"]
    messages = sent(batch.view)
    while 0 not in batch.runs:
        await __import__("asyncio").sleep(0.01)
    batch.view._dispatch({"kind": "row", "index": 0, "msg": {"kind": "snapshot_request"}})
    snapshot = messages[-1]
    assert (snapshot["kind"], snapshot["index"], snapshot["msg"]["kind"]) == ("row", 0, "snapshot")
    assert snapshot["msg"]["events"][0]["kind"] == "run_started"
    batch.view._dispatch({"kind": "row", "index": 0, "msg": {"kind": "stop"}})
    while batch.rows[0].status == "running":
        await __import__("asyncio").sleep(0.01)
    assert batch.rows[0].status == "stopped"
    assert batch.rows[1].status in ("running", "completed")  # the others go on
    batch.cancel()
    await batch
    batch.view.flush()
    rest = [e for m in messages if m["kind"] == "rows" for o in m.get("open", []) for e in o["events"]]
    assert rest[-1]["kind"] == "processing_complete" and rest[-1]["status"] == "stopped"
    # A finished row's view is read back from its journal.
    batch.view._dispatch({"kind": "row", "index": 0, "msg": {"kind": "snapshot_request"}})
    assert [e["kind"] for e in messages[-1]["msg"]["events"]][-1] == "processing_complete"


async def test_a_glob_of_text_files_gives_filename_and_text(ip: InteractiveShell, tmp_path: Path) -> None:
    for name, word in [("a.txt", "alpha"), ("b.md", "beta")]:
        (tmp_path / name).write_text(f"SHOUT: {word}\n")
    ip.user_ns["folder"] = str(tmp_path)
    ip.run_cell_magic("agent", f'--over "{tmp_path}/*" -m shouter -o b --keep', "{{ text }} [[answer]]")
    result = await ip.user_ns["b"]
    assert [(Path(r["filename"]).name, r["answer"]) for r in result.to_records()] == [("a.txt", "ALPHA"), ("b.md", "BETA")]


@pytest.mark.parametrize(
    ("line", "cell", "message"),
    [
        ("--over 42", "{{ item }} [[answer]]",
         "--over must be a DataFrame, a list of dicts, a list of strings or a glob of files; got a int"),
        ('--over "/nowhere/*.txt"', "{{ text }} [[answer]]", "--over '/nowhere/*.txt' matches no file"),
        ("--over rows", "{{ name }} [[answer]]",
         "row 1 has no 'name', which the template reads as {{ name }} (the row's fields: nom; the notebook does "
         "not define it either)"),
        ("--over words --concurrency 0", "{{ item }} [[answer]]", "--concurrency must be a positive whole number, got 0"),
        ("--over nothing", "{{ item }} [[answer]]", "--over 'nothing' failed: NameError: name 'nothing' is not defined"),
        ("--over words --approve writes", "{{ item }} [[answer]]",
         "--approve writes waits for a click before each call, which a batch of rows cannot do; mark the tools "
         "@readonly, or pass approve= to agentcell.map from Python"),
        ("--over words --record /tmp/never.json", "{{ item }} [[answer]]",
         "--record and --replay follow one run's requests in order; a batch runs many rows at once: record a "
         "single row with %%agent instead"),
    ],
    ids=["not-a-table", "empty-glob", "row-missing-variable", "concurrency", "undefined", "approve-writes", "record"],
)
async def test_bad_input_is_one_line_before_any_row(ip: InteractiveShell, line: str, cell: str, message: str) -> None:
    ip.user_ns["rows"] = [{"name": "ada"}, {"nom": "bob"}]
    with pytest.raises(UsageError) as exc:
        ip.run_cell_magic("agent", line + " -m shouter", cell)
    assert str(exc.value) == message


async def test_a_batch_cells_rows_speak_the_cells_words(ip: InteractiveShell) -> None:
    """The offline model's advice in a row says `--model` (the cell's flag), not `model=` (Python's keyword)."""
    ip.run_cell_magic("agent", "--over words -o b --max-rows 2", "Describe {{ item }} [[answer]]")
    result = await ip.user_ns["b"]
    answers = [r["answer"] for r in result.to_records()]
    assert all("pass `--model` to the cell" in a for a in answers), answers
    assert not any("model=\"openai" in a for a in answers)


async def test_expect_and_baseline_last_score_the_cell_and_compare_it_with_its_previous_batch(
        ip: InteractiveShell) -> None:
    from pydantic_ai.models.function import FunctionModel

    async def half(messages: Any, info: Any) -> Any:  # right on even rows only
        word = str(messages[-1].parts[-1].content).split()[-1]
        yield word.upper() if int(word[1:]) % 2 == 0 else "nope"

    ip.user_ns["half"] = FunctionModel(stream_function=half)
    ip.user_ns["rows"] = [{"item": f"w{i}", "gold": f"W{i}"} for i in range(12)]
    cell = "SHOUT: {{ item }} [[answer]]"
    ip.run_cell_magic("agent", "--over rows -m half -o first --expect answer=gold --baseline last", cell)
    first = await ip.user_ns["first"]
    assert first.summary()["passed"] == 6 and first.comparison is None  # the cell's first batch: nothing before
    ip.run_cell_magic("agent", "--over rows -m shouter -o second --expect answer=gold --baseline last", cell)
    second = await ip.user_ns["second"]
    assert second.comparison is not None and second.comparison.improved == [1, 3, 5, 7, 9, 11]
    assert second.comparison.line == "6 improved, 0 regressed, 6 unchanged"
    ip.run_cell_magic("agent", "--over rows -m half -o third --expect answer=gold --baseline second", cell)
    third = await ip.user_ns["third"]
    assert third.comparison is not None and third.comparison.regressed == [1, 3, 5, 7, 9, 11]
    final = ip.user_ns["third"].view.final
    assert final["summary"]["line"].startswith("6/12 passed")
    assert final["summary"]["baseline"] == "0 improved, 6 regressed, 6 unchanged"


async def test_a_bad_expect_is_one_line(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"--expect 'answer': write SLOT=COLUMN, e.g. --expect answer=gold"):
        ip.run_cell_magic("agent", "--over words -m shouter --expect answer", "SHOUT: {{ item }} [[answer]]")
