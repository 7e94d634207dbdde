"""The batch manifest `--resume` reads: one flushed line per finished row, latest state per row key."""

from __future__ import annotations

from pathlib import Path

from agentcell.batch.results import RowResult
from agentcell.batch.resume import Manifest, manifest_path, read_finished
from agentcell.usage import Usage


def test_rows_are_read_back_and_done_stays_done(tmp_path: Path) -> None:
    path = manifest_path("ab" * 32, tmp_path)
    assert path == tmp_path / "batches" / ("ab" * 8 + ".jsonl")
    manifest = Manifest(path)
    manifest.write(RowResult(index=0, key="k0", status="completed", results={"n": 1}, usage=Usage(requests=1),
                             run_id="r0"))
    manifest.write(RowResult(index=1, key="k1", status="failed", error="boom", run_id="r1"))
    manifest.write(RowResult(index=0, key="k0", status="stopped", error="stopped", run_id="r2"))  # a later rerun
    manifest.write(RowResult(index=1, key="k1", status="completed", results={"n": 2}, run_id="r3"))
    manifest.close()
    with open(path, "ab") as f:
        f.write(b'{"key": "k2", "status": "compl')  # a line cut short by a crash
    found = read_finished(path)
    assert {k: (v.status, v.results, v.run_id) for k, v in found.items()} == {
        "k0": ("completed", {"n": 1}, "r0"),
        "k1": ("completed", {"n": 2}, "r3"),
    }
    assert found["k0"].usage == Usage(requests=1)


def test_no_manifest_when_the_journal_is_off() -> None:
    assert manifest_path("ab" * 32, False) is None
    assert read_finished(Path("/nowhere/at/all.jsonl")) == {}


def test_a_row_whose_values_are_not_valid_utf8_or_not_json_is_still_recorded(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    manifest = Manifest(path)
    manifest.write(RowResult(index=0, key="k0", status="completed", results={"a": "x\ud83dy", "b": {1, 2}},
                             error="bad \udc00", run_id="r0", duration=1.23456))
    manifest.close()
    found = read_finished(path)["k0"]
    assert found.results == {"a": "x\ufffdy", "b": [1, 2]} and found.error == "bad \ufffd"
    assert found.duration == 1.235
