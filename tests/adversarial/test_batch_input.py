"""Hostile batch input: a corrupted resume manifest, rows no JSON can hold, a ragged CSV, `max_rows=-1`, and a
row Dask cannot pickle (issue 40, item 8).

Before: `--resume` over a manifest with a line like `[1]`, `null` or `{"usage": {"requests": "x"}}` raised
`AttributeError`/`TypeError` and nothing ran; a row holding a lone surrogate, a value whose `__repr__` raises, a
dict that contains itself, a 5,000-deep dict or bytes that are not UTF-8 made `agentcell.map` (and the magic,
through a 12-frame traceback) raise `UnicodeEncodeError`, `RuntimeError`, `ValueError` or `UnicodeDecodeError`
while hashing the row; the batch widget's table raised on the same values (and stayed "running"), and so did
the results' CSV/JSON export with `keep`; a CSV line with more fields than its header failed with `TypeError:
keywords must be strings`; `max_rows=-1` silently dropped the last row; a row holding a lock failed on Dask
with `TypeError: ('Could not serialize object of type LLGExpr', ...)`. Now: unreadable manifest lines are left
out with one `JournalWarning` and their rows run again; every row gets a key, so the batch starts and a row
that cannot be rendered fails alone with one line while the others run; the table and the export show what
JSON cannot hold as its repr; the ragged CSV line fails alone with a sentence naming the file and line;
`max_rows` below 1 is a `BatchError`; a row that cannot travel to Dask is found before any row starts and fails
alone with a sentence naming its field.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.batch import BatchError, map
from agentcell.batch.inputs import row_key
from agentcell.batch.resume import manifest_path
from agentcell.errors import JournalWarning
from agentcell.frontends.widget.batch_view import BatchWidget, static_bundle
from agentcell.template import compile_template
from tests.batch.conftest import Shouter

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def _deep(levels: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    inner = top
    for _ in range(levels):
        inner["x"] = {}
        inner = inner["x"]
    return top


HOSTILE: dict[str, Any] = {
    "lone-surrogate": "bad \ud800 text",
    "raising-repr": BadRepr(),
    "cyclic-dict": _cyclic(),
    "5000-deep-dict": _deep(5000),
    "undecodable-bytes": b"\xff\xfe not utf-8",
}


@pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
async def test_a_hostile_row_runs_or_fails_alone_and_the_batch_goes_on(value: Any, tmp_path: Path) -> None:
    rows = [{"item": "ok0"}, {"item": value}, {"item": "ok2"}]
    batch = map(TEMPLATE, rows, model=Shouter().model, journal=tmp_path, keep=True)  # before: a raw exception
    widget = BatchWidget(batch)
    sent: list[Any] = []
    widget.send = sent.append  # type: ignore[method-assign]
    result = await asyncio.wait_for(batch.wait(), 30)
    assert result.status == "completed"
    assert [result.rows[0].status, result.rows[2].status] == ["completed", "completed"]
    hostile = result.rows[1]
    assert hostile.status in ("completed", "failed")
    if hostile.status == "failed":
        assert hostile.error and "\n" not in hostile.error and len(hostile.error) < 400
    # The live table and the saved one show every row (before: the flush raised and the widget stayed "running").
    widget.flush()
    json.dumps(sent, ensure_ascii=False).encode("utf-8")  # what the comm sends must be valid UTF-8
    assert widget.status == "completed" and len(widget.final["rows"]) == 3
    static_bundle(batch)["text/html"].encode("utf-8")
    # The results export with the inputs kept (before: the same raw exceptions).
    result.to_csv(tmp_path / "out.csv")
    result.to_json(tmp_path / "out.json")
    assert len(json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))) == 3


def test_every_row_has_a_key_and_equal_rows_share_it() -> None:
    for value in HOSTILE.values():
        assert len(row_key({"item": value})) == 64
    assert row_key({"item": "bad \ud800 text"}) == row_key({"item": "bad \ud800 text"})  # --resume still matches
    assert row_key({"item": b"\xff"}) == row_key({"item": b"\xff"})
    assert row_key({"item": _cyclic()}) != row_key({"item": _cyclic()})  # unmatchable: --resume runs it again


def test_hostile_rows_through_the_magic_are_rows_not_tracebacks(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.user_ns["rows"] = [{"item": value} for value in HOSTILE.values()]
    shell.user_ns["shouter"] = Shouter().model

    async def run() -> Any:
        shell.run_cell_magic("agent", "--over rows -m shouter -o b -q", TEMPLATE)  # before: a raw exception
        return await asyncio.wait_for(shell.user_ns["b"].wait(), 30)

    result = asyncio.run(run())
    assert len(result.rows) == len(HOSTILE) and all(r.finished for r in result.rows)


MANIFEST_LINES = {
    "a-list": "[1]",
    "null": "null",
    "a-string": '"text"',
    "a-number": "3",
    "requests-as-text": '{"key": "K", "status": "completed", "usage": {"requests": "x"}}',
    "cost-as-text": '{"key": "K", "status": "completed", "usage": {"cost": "cheap"}}',
    "status-as-list": '{"key": "K", "status": ["completed"]}',
    "results-as-list": '{"key": "K", "status": "completed", "results": [1, 2]}',
    "run-id-as-number": '{"key": "K", "status": "completed", "run_id": 5}',
}


@pytest.mark.parametrize("line", list(MANIFEST_LINES.values()), ids=list(MANIFEST_LINES))
async def test_a_corrupted_manifest_line_is_left_out_and_its_row_runs_again(line: str, tmp_path: Path) -> None:
    path = manifest_path(compile_template(TEMPLATE).sha256, tmp_path)
    assert path is not None
    path.parent.mkdir(parents=True)
    done = json.dumps({"key": row_key({"item": "b"}), "status": "completed", "results": {"answer": "B"}})
    path.write_text(line.replace('"K"', json.dumps(row_key({"item": "a"}))) + "\n" + done + "\n")
    with pytest.warns(JournalWarning, match=r"--resume left out 1 line of .* \(line 1: .*\); their rows run again"):
        batch = map(TEMPLATE, ["a", "b"], model=Shouter().model, journal=tmp_path, resume=True)  # before: raised
    result = await asyncio.wait_for(batch.wait(), 30)
    assert [(r.status, r.resumed) for r in result.rows] == [("completed", False), ("completed", True)]
    assert result.rows[1].results == {"answer": "B"}


async def test_a_csv_line_with_more_fields_than_its_header_fails_alone(tmp_path: Path) -> None:
    table = tmp_path / "words.csv"
    table.write_text("item,note\nalpha,1\nbeta,2,surplus\ngamma,3\n", encoding="utf-8")
    result = await map(TEMPLATE, str(table), model=Shouter().model, journal=False)
    assert [r.status for r in result.rows] == ["completed", "failed", "completed"]
    assert result.rows[1].error == (f"{table} line 3 has 3 fields but its header names 2; the row was not run "
                                    "(quote a value that holds a comma)")  # before: TypeError: keywords must be strings
    assert result.rows[1].run_id is None


@pytest.mark.parametrize("max_rows", [-1, 0, True, 1.5], ids=["minus-one", "zero", "bool", "float"])
def test_max_rows_below_one_is_an_error(max_rows: Any) -> None:
    with pytest.raises(BatchError, match=r"^max_rows must be a positive whole number \(the first rows to run\), got "):
        map(TEMPLATE, ["a", "b", "c"], model=Shouter().model, journal=False, max_rows=max_rows)  # before: 2 rows


async def test_max_rows_takes_the_first_rows() -> None:
    result = await map(TEMPLATE, ["a", "b", "c"], model=Shouter().model, journal=False, max_rows=2)
    assert [r.results["answer"] for r in result.rows] == ["A", "B"]


@pytest.fixture
def no_dask_noise() -> Iterator[None]:
    import logging

    loggers = [logging.getLogger(n) for n in ("distributed", "distributed.worker", "distributed.scheduler")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)  # the old code's serialization failure logs a traceback
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


async def test_a_row_dask_cannot_pickle_fails_alone_before_the_batch(no_dask_noise: None) -> None:
    distributed = pytest.importorskip("distributed")
    cluster = await distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, asynchronous=True,
                                             dashboard_address=None)
    client = await distributed.Client(cluster, asynchronous=True)
    try:
        rows = [{"item": "a"}, {"item": "b", "lock": threading.Lock()}, {"item": "c"}]
        batch = map(TEMPLATE, rows, model="offline:fast", journal=False, client=client)
        assert batch.rows[1].status == "pending"
        result = await asyncio.wait_for(batch.wait(), 60)
    finally:
        await client.close()
        await cluster.close()
    assert [r.status for r in result.rows] == ["completed", "failed", "completed"]
    assert result.rows[1].error == ("row 1's 'lock' cannot be sent to Dask workers (TypeError: cannot pickle "
                                    "'_thread.lock' object); the row was not run")
