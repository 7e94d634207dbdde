"""The journal on a shared disk: private, contained, bounded, cleaned up, and readable whatever it holds.

Before: files were `0644` in a `0755` folder (others could read transcripts); `run_id="../../x"` wrote
outside the folder; nothing bounded a run's journal or the folder; `load()` crashed (pydantic
`ValidationError`, `KeyError`, `RecursionError`) on valid-JSON rows of the wrong shape (an unknown
kind from a newer version, missing fields, deep nesting) and `%agent show` let that through; a write
failure in a message row (full disk) raised inside the request hook and failed the run. After: `0600`
files in a `0700` folder; run ids validated; a per-run size cap (`AGENTCELL_JOURNAL_MAX_MB`) and a
retention rule with `%agent journal list|clean`; `load()` leaves unreadable rows out with one
`JournalWarning` and raises only `AgentcellError`; any write failure stops the journal with a warning.
"""

from __future__ import annotations

import gc
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell import journal
from agentcell.engine import start_run
from agentcell.errors import AgentcellError, JournalWarning
from agentcell.journal import Journal, Retention, clean, list_runs
from tests.engine.conftest import Call, Script, Sleep, slot, template

pytestmark = pytest.mark.anyio


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def _journaled(folder: Path, *responses: object, run_id: str | None = None) -> str:
    script = Script(*responses)  # type: ignore[arg-type]
    run = start_run(template(slot("a")), model=script.model, journal=folder, run_id=run_id)
    await run.wait()
    return run.run_id


async def test_files_are_0600_in_a_0700_folder(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "journal"
    run_id = await _journaled(folder, ["hi"])
    assert mode(folder) == 0o700
    assert mode(folder / f"{run_id}.jsonl") == 0o600


async def test_the_default_folder_and_an_old_wide_file_are_narrowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "default"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    (folder / "old1.jsonl").write_text("")
    (folder / "old1.jsonl").chmod(0o644)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(folder))
    Journal(folder / "old1.jsonl", segment=2).close()
    assert (mode(folder), mode(folder / "old1.jsonl")) == (0o700, 0o600)


@pytest.mark.parametrize("run_id", ["../../x", "a/b", "..", ".hidden", "x" * 129, "name with space"])
async def test_run_ids_that_are_not_file_names_are_refused(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(AgentcellError, match="invalid run id"):
        start_run(template(slot("a")), model=Script(["hi"]).model, journal=tmp_path / "j", run_id=run_id)
    with pytest.raises(AgentcellError, match="invalid run id"):
        journal.load(run_id, path=tmp_path / "j")
    assert not any(tmp_path.rglob("*.jsonl"))


def _row(**fields: object) -> str:
    return json.dumps({"ts": 1.0, "seg": 1, **fields})


async def test_load_leaves_out_rows_it_cannot_read_with_one_warning(tmp_path: Path) -> None:
    run_id = await _journaled(tmp_path, ["hi"])
    file = tmp_path / f"{run_id}.jsonl"
    good = file.read_text().splitlines()
    deep = "[" * 100_000 + "]" * 100_000
    bad = [
        _row(event={"kind": "from_the_future", "run_id": run_id}),
        _row(event={"kind": "token_delta"}),  # fields missing
        _row(event=json.loads("[" * 500 + "]" * 500)),
        deep,
        "[1, 2]",
        "not json at all",
        _row(slot="a", index=-1, messages=[]),
        _row(something="else"),
    ]
    file.write_text("\n".join([good[0], *bad, *good[1:]]) + "\n")
    with pytest.warns(JournalWarning, match=r"left out 8 unreadable row\(s\): line 2: unknown event kind 'from_the_future'"):
        record = journal.load(run_id, path=tmp_path)
    assert record.finished and record.to_result().answer == "hi"
    assert [s.split(":")[0] for s in record.skipped] == [f"line {n}" for n in range(2, 10)]


async def test_a_last_line_cut_by_a_crash_is_left_out_silently(tmp_path: Path) -> None:
    run_id = await _journaled(tmp_path, ["hi"])
    file = tmp_path / f"{run_id}.jsonl"
    lines = file.read_bytes().splitlines(keepends=True)
    file.write_bytes(b"".join(lines[:-1]) + lines[-1][:25])  # the ending row, half written
    record = journal.load(run_id, path=tmp_path)
    assert not record.finished and record.skipped == ()


def test_load_raises_only_agentcell_errors(tmp_path: Path) -> None:
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(AgentcellError, match="cannot read the journal of run 'folder'"):
        journal.load("folder", path=tmp_path)
    with pytest.raises(AgentcellError, match="no journal for run 'nothing'"):
        journal.load("nothing", path=tmp_path)


async def test_load_pauses_the_collector_and_restores_it(tmp_path: Path) -> None:
    run_id = await _journaled(tmp_path, ["hi"])
    assert gc.isenabled()
    journal.load(run_id, path=tmp_path)
    assert gc.isenabled()


async def test_restored_partial_answer_leaves_out_retracted_narration(tmp_path: Path) -> None:
    def lookup(q: str) -> str:
        """Look q up."""
        return "found"

    script = Script(["Let me look that up. ", Call("lookup", {"q": "x"})], ["The answer ", Sleep(30), "is 42."])
    run = start_run(template(slot("a", use_tools=True)), model=script.model, tools=[lookup], journal=tmp_path)
    file = tmp_path / f"{run.run_id}.jsonl"
    while b"The answer" not in file.read_bytes():
        await __import__("asyncio").sleep(0.01)
    crashed = file.read_bytes()  # what a process that died now would leave
    run.cancel()
    await run.wait()
    file.write_bytes(crashed)
    assert journal.load(run.run_id, path=tmp_path).to_result().partial == {"a": "The answer "}


async def test_a_run_past_the_size_cap_goes_on_unjournaled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCELL_JOURNAL_MAX_MB", "0.005")  # about 5 KB
    script = Script(["word " * 3000])
    run = start_run(template(slot("a")), model=script.model, journal=tmp_path)
    result = await run.wait()
    assert result.status == "completed"
    assert "journaling stopped: the journal reached its cap of 0.005 MB per run (AGENTCELL_JOURNAL_MAX_MB); " \
           "the rest of this run is not journaled" in result.warnings
    assert (tmp_path / f"{run.run_id}.jsonl").stat().st_size <= 0.005 * 1024 * 1024


async def test_a_failing_write_stops_the_journal_not_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Full:
        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

        def close(self) -> None:
            pass

    run = start_run(template(slot("a")), model=Script(["hi"]).model, journal=tmp_path)
    assert run._state.journal is not None
    real = run._state.journal._file
    assert real is not None
    real.close()
    monkeypatch.setattr(run._state.journal, "_file", Full())
    result = await run.wait()
    assert result.status == "completed" and result.answer == "hi"
    assert any(w.startswith("journaling stopped: OSError: [Errno 28] No space left on device") for w in result.warnings)


def _fake_runs(folder: Path, ages_days: list[float], *, now: float | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time() if now is None else now
    for n, age in enumerate(ages_days):
        path = folder / f"run{n}.jsonl"
        path.write_text("{}\n")
        os.utime(path, (now - age * 86_400, now - age * 86_400))


def test_retention_keeps_the_newest_runs_and_drops_old_ones(tmp_path: Path) -> None:
    _fake_runs(tmp_path, [0, 1, 2, 40, 50], now=1_000_000_000.0)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "my data.jsonl").write_text("mine")  # not a run id: never touched
    removed = clean(tmp_path, keep=Retention(runs=2, days=30), now=1_000_000_000.0)
    assert sorted(f.run_id for f in removed) == ["run2", "run3", "run4"]
    assert [f.run_id for f in list_runs(tmp_path)] == ["run0", "run1"]
    assert (tmp_path / "notes.txt").exists() and (tmp_path / "my data.jsonl").exists()


async def test_a_new_run_prunes_the_default_folder_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default, mine = tmp_path / "default", tmp_path / "mine"
    _fake_runs(default, [100, 100])
    _fake_runs(mine, [100, 100])
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(default))
    run = start_run(template(slot("a")), model=Script(["hi"]).model)
    await run.wait()
    assert [f.run_id for f in list_runs(default)] == [run.run_id]
    await _journaled(mine, ["hi"])
    assert {"run0", "run1"} <= {f.run_id for f in list_runs(mine)}


@pytest.fixture
def ip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    yield shell
    shell.run_line_magic("unload_ext", "agentcell")  # type: ignore[no-untyped-call]
    InteractiveShell.clear_instance()


def test_agent_journal_lists_and_cleans(ip: InteractiveShell, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_runs(tmp_path / "journal", [0, 1, 45])
    ip.run_line_magic("agent", "journal")
    listing = capsys.readouterr().out
    assert listing.startswith(f"3 journal(s) in {tmp_path / 'journal'}, 9 B:")
    assert [line.split()[0] for line in listing.splitlines()[1:]] == ["run0", "run1", "run2"]
    ip.run_line_magic("agent", "journal clean")
    assert capsys.readouterr().out.startswith("removed 1 journal(s), 3 B, from")
    ip.run_line_magic("agent", "journal clean all")
    assert capsys.readouterr().out.startswith("removed 2 journal(s)")
    assert list_runs(tmp_path / "journal") == []


def test_the_default_folder_follows_the_environment_after_being_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`default_dir` is remembered per set of environment variables (a batch asks per row); a changed one is seen."""
    from agentcell.journal.paths import default_dir

    monkeypatch.delenv("AGENTCELL_JOURNAL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "a"))
    assert default_dir() == tmp_path / "a" / "agentcell" / "journal"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "b"))
    assert default_dir() == tmp_path / "b" / "agentcell" / "journal"
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "mine"))
    assert default_dir() == tmp_path / "mine"
    monkeypatch.setenv("AGENTCELL_JOURNAL", "off")
    assert default_dir() == tmp_path / "b" / "agentcell" / "journal"
