"""A batch whose journal disk is full, or whose journal path is a file (issue 40, item 5).

Before: when the disk filled, the manifest's failed line stayed in the file's buffer, so closing the manifest
at the batch's end raised `OSError` again inside the batch's task: `done` stayed false, `async for` waited
forever, `await batch` raised a raw `OSError` and the `BatchResult` was lost. A journal path that is a regular
file raised `NotADirectoryError` from `agentcell.map` before any row ran. Now: the batch ends `stopped`, its
`reason` naming the manifest and the OS error, and `await batch` returns the result with every finished row;
a journal path that is a file gives one `JournalWarning` and the rows run (single runs already warned and went on).
"""

from __future__ import annotations

import asyncio
import errno
import io
from pathlib import Path
from typing import IO

import pytest

from agentcell.batch import map, resume
from agentcell.errors import JournalWarning
from tests.batch.conftest import Shouter

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"
WORDS = [f"w{i:02d}" for i in range(12)]


class FullDisk(io.RawIOBase):
    """A file on a disk with no space left: every write to the OS fails with ENOSPC (as a full tmpfs does)."""

    def writable(self) -> bool:
        return True

    def write(self, _data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")


def _full_after(lines: int) -> IO[bytes]:
    """A buffered file (what `open(..., "ab")` gives) that takes `lines` flushes, then finds the disk full."""

    class Filling(FullDisk):
        left = lines

        def write(self, data: object) -> int:
            if Filling.left > 0:
                Filling.left -= 1
                return len(data)  # type: ignore[arg-type]
            return super().write(data)

    return io.BufferedWriter(Filling())


async def test_a_full_disk_ends_the_batch_stopped_with_its_reason(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resume, "open_private", lambda _path: _full_after(2))
    batch = map(TEMPLATE, WORDS, model=Shouter().model, journal=tmp_path, concurrency=2)
    seen = [row.index async for row in batch]  # before: waited forever
    result = await asyncio.wait_for(batch.wait(), 30)  # before: a raw OSError
    assert batch.done and result is batch.result
    assert sorted(seen) == list(range(len(WORDS)))
    assert result.status == "stopped"
    assert result.reason is not None
    assert "could not be written to" in result.reason and "No space left on device" in result.reason
    assert result.counts.get("completed", 0) >= 2  # the rows that ended before the disk filled are kept
    assert result.counts.get("not_started", 0) > 0


async def test_a_disk_full_from_the_start_still_gives_the_result(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resume, "open_private", lambda _path: io.BufferedWriter(FullDisk()))
    result = await asyncio.wait_for(map(TEMPLATE, WORDS[:3], model=Shouter().model, journal=tmp_path,
                                        concurrency=1).wait(), 30)
    assert result.status == "stopped" and "No space left on device" in (result.reason or "")
    assert result.rows[0].status == "completed"  # its answer is in the table even though the manifest lost it


async def test_a_journal_path_that_is_a_file_warns_and_the_rows_run(tmp_path: Path) -> None:
    a_file = tmp_path / "journal"
    a_file.write_text("not a folder")
    with pytest.warns(JournalWarning, match="could not be opened .*NotADirectoryError"):
        batch = map(TEMPLATE, WORDS[:3], model=Shouter().model, journal=a_file)  # before: NotADirectoryError
    result = await batch
    assert result.status == "completed"
    assert [r.results["answer"] for r in result.rows] == ["W00", "W01", "W02"]


async def test_a_manifest_that_cannot_be_written_is_still_read_by_resume(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    first = await map(TEMPLATE, WORDS[:2], model=Shouter().model, journal=tmp_path)
    assert first.status == "completed"

    def read_only_disk(_path: Path) -> IO[bytes]:
        raise PermissionError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(resume, "open_private", read_only_disk)
    with pytest.warns(JournalWarning, match="could not be opened .*Read-only file system"):
        batch = map(TEMPLATE, WORDS[:3], model=Shouter().model, journal=tmp_path, resume=True)
    result = await batch
    assert [r.resumed for r in result.rows] == [True, True, False]  # what it held still counts
    assert result.rows[2].results == {"answer": "W02"}
