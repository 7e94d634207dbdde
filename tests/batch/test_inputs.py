"""What `--over` accepts, read into rows; and what it refuses, in one line, before any row starts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from agentcell.batch import BatchError
from agentcell.batch.inputs import check_rows, read_rows, row_key


def fields(over: object, **kw: object) -> list[dict[str, object]]:
    return [dict(r.fields) for r in read_rows(over, **kw)]  # type: ignore[arg-type]


def test_a_dataframe_gives_one_row_per_line_with_its_columns() -> None:
    frame = pd.DataFrame({"name": ["ada", "bob"], "score": [3, 4]})
    assert fields(frame) == [{"name": "ada", "score": 3}, {"name": "bob", "score": 4}]


def test_strings_are_items_and_dicts_are_fields() -> None:
    assert fields(["a", "b"]) == [{"item": "a"}, {"item": "b"}]
    assert fields([{"x": 1}, {"x": 2, "y": 3}]) == [{"x": 1}, {"x": 2, "y": 3}]
    assert fields(["a", "b", "c"], max_rows=2) == [{"item": "a"}, {"item": "b"}]


def test_a_glob_of_files_reads_text_csv_json_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.md").write_text("# beta")
    (tmp_path / "c.csv").write_text("name,score\nada,3\nbob,4\n")
    (tmp_path / "d.json").write_text(json.dumps([{"name": "cy"}]))
    (tmp_path / "e.jsonl").write_text('{"name": "di"}\n{"name": "ed"}\n')
    rows = fields(str(tmp_path / "*"))
    f = str(tmp_path)
    assert rows == [
        {"filename": f"{f}/a.txt", "text": "alpha"},
        {"filename": f"{f}/b.md", "text": "# beta"},
        {"name": "ada", "score": "3", "filename": f"{f}/c.csv"},
        {"name": "bob", "score": "4", "filename": f"{f}/c.csv"},
        {"name": "cy", "filename": f"{f}/d.json"},
        {"name": "di", "filename": f"{f}/e.jsonl"},
        {"name": "ed", "filename": f"{f}/e.jsonl"},
    ]
    assert fields(str(tmp_path / "a.txt")) == [{"filename": f"{f}/a.txt", "text": "alpha"}]  # one file, no glob


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (42, "--over must be a DataFrame, a list of dicts, a list of strings or a glob of files; got a int"),
        ({"a": 1}, "--over got a dict; give a list of dicts (one per row), a DataFrame, a list of strings or a glob of files"),
        (["a", {"b": 1}], "--over mixes strings and other rows; give all dicts or all strings"),
        ([{"a": 1}, 3], "--over row 1 is a int; rows must be all dicts (fields) or all strings"),
        ("/no/such/dir/*.txt", "--over '/no/such/dir/*.txt' matches no file"),
    ],
    ids=["int", "dict", "mixed", "not-a-row", "empty-glob"],
)
def test_bad_over_values_are_one_line(over: object, message: str) -> None:
    with pytest.raises(BatchError) as exc:
        read_rows(over)
    assert str(exc.value) == message


def test_a_row_missing_a_variable_names_the_row_and_the_variable() -> None:
    rows = read_rows([{"name": "ada"}, {"name": "bob"}, {"nom": "cy"}])
    check_rows(rows[:2], {"name", "topic"}, {"topic"})  # the notebook defines `topic`: fine
    with pytest.raises(BatchError, match=r"^row 2 has no 'name', which the template reads as \{\{ name \}\} "
                                         r"\(the row's fields: nom; the notebook does not define it either\)$"):
        check_rows(rows, {"name", "topic"}, {"topic"})


def test_row_keys_depend_on_content_only() -> None:
    assert row_key({"a": 1, "b": "x"}) == row_key({"b": "x", "a": 1})
    assert row_key({"a": 1}) != row_key({"a": 2})
