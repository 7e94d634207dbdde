"""What `--resume` reads: each batch row journalled as it finishes, per template.

Beside the run journal (`journal.py`: one JSONL file per run, every event) a batch keeps a manifest, `<journal
folder>/batches/<template sha256[:16]>.jsonl`, with one line per finished row: its content key, status, slot
values, error, usage, run id and duration; the rows' run journals are in the folder of the same name beside it
(`batches/<template sha256[:16]>/<run id>.jsonl`), which retention counts as one. Each line is one write
followed by a flush, so a Stop, an interrupt or a dead kernel loses only the rows in flight. `--resume` reads
the manifest of the same template and skips every row whose content key is there as done (`completed` or
`halted`); failed, stopped and unseen rows run again. The row's run id leads to its full transcript.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError, to_json, to_jsonable_python

from ..errors import JournalWarning
from ..formats.jsonsafe import scrub
from ..journal import JournalOption, journal_path
from ..journal.paths import BATCHES, AppendFile, open_private
from ..usage import Usage
from .results import RowResult

DONE = frozenset({"completed", "halted"})
"""Row statuses `--resume` does not run again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """A row as an earlier batch's manifest has it."""

    status: str
    results: dict[str, Any]
    usage: Usage
    run_id: str | None
    error: str | None = None
    duration: float | None = None


def journal_folder(option: JournalOption) -> Path | None:
    """The folder a batch's row runs journal into under `option` (`None`: journaling is off)."""
    path = journal_path("0", option)  # any valid run id: only the folder is wanted
    return None if path is None else path.parent


def manifest_path(template_sha256: str, option: JournalOption) -> Path | None:
    """Where the rows of batches over this template are journalled (`None`: journaling is off)."""
    folder = journal_folder(option)
    return None if folder is None else folder / BATCHES / f"{template_sha256[:16]}.jsonl"


class _Line(BaseModel):
    """One manifest line as `Manifest.write` writes it; a line of another shape (hand-edited, corrupted) is left out."""

    model_config = ConfigDict(extra="ignore")

    key: str
    status: str
    results: dict[str, Any] | None = None
    usage: Usage = Field(default_factory=Usage)
    run_id: str | None = None
    error: str | None = None
    duration: float | None = None


def read_finished(path: Path) -> dict[str, Finished]:
    """Row key → its latest finished state in the manifest at `path` (empty when there is none).

    A line that is not a row (`[1]`, `null`, a string where a number goes) is left out, and its row runs again;
    one `JournalWarning` names how many were and the first. A last line cut short by a crash mid-write is left
    out silently (that is what a crash leaves)."""
    found: dict[str, Finished] = {}
    skipped: list[str] = []
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        return found  # none yet (or not readable: nothing is known to be done)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = _Line.model_validate_json(line)
        except ValidationError as exc:
            if number < len(lines):  # the last piece has no newline after it: a line cut short by a crash
                skipped.append(f"line {number}: {_first_problem(exc)}")
            continue
        earlier = found.get(row.key)
        if earlier is not None and earlier.status in DONE and row.status not in DONE:
            continue  # done once (same template, same row) stays done; a later stopped rerun changes nothing
        found[row.key] = Finished(status=row.status, results=row.results or {}, usage=row.usage, run_id=row.run_id,
                                  error=row.error, duration=row.duration)
    if skipped:
        lines_ = "line" if len(skipped) == 1 else "lines"
        warnings.warn(f"--resume left out {len(skipped)} {lines_} of {path} it could not read ({skipped[0]}); "
                      "their rows run again", JournalWarning, stacklevel=2)
    return found


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


class Manifest:
    """Appends each finished row of a batch to its template's manifest; one flushed line per row.

    The file is private like a run's journal (0600 in a 0700 folder). A write that fails (a full disk)
    closes the file and raises: the batch stops and says why (`runner.py`), rather than go on with rows
    `--resume` would never know were done. Closing never raises.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: AppendFile | None = open_private(path)  # held for the batch, closed by close()

    def write(self, row: RowResult) -> None:
        """Append `row` as one flushed line.

        Raises:
            OSError: the line could not be written (the manifest is closed: nothing more is written).
        """
        if self._file is None:
            return
        record = {
            "ts": round(time.time(), 3),
            "key": row.key,
            "index": row.index,
            "status": row.status,
            "results": dict(row.results),
            "error": row.error,
            "usage": row.usage,
            "run_id": row.run_id,
            "duration": None if row.duration is None else round(row.duration, 3),
        }
        try:
            line = to_json(record, fallback=repr)  # one call in C (a row of a batch of thousands)
        except PydanticSerializationError:  # text that is not valid UTF-8 (a lone surrogate): replaced
            line = to_json(scrub(to_jsonable_python(record, fallback=repr))[0])
        try:
            self._file.write(line + b"\n")
            self._file.flush()
        except OSError:
            self.close()  # what stayed in the buffer would fail again at every later flush, and at close
            raise

    def close(self) -> None:
        """Close the file; a last flush that fails (the disk filled meanwhile) loses only that line."""
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()


    @classmethod
    def read_only(cls, path: Path) -> Manifest:
        """A manifest that records nothing: `--resume` still reads what `path` holds (a read-only disk)."""
        manifest = cls.__new__(cls)
        manifest.path, manifest._file = path, None
        return manifest


def open_manifest(path: Path | None) -> Manifest | None:
    """The manifest at `path` (`None`: journaling is off). One that cannot be opened for writing (the journal
    path is a file, not a folder; a read-only disk) gives a `JournalWarning` and records nothing: the batch
    runs, and `--resume` reads what the manifest already holds, but a later `--resume` will not know these rows."""
    if path is None:
        return None
    try:
        return Manifest(path)
    except OSError as exc:
        warnings.warn(
            f"the batch's manifest {path} could not be opened ({type(exc).__name__}: {exc}); the rows run, but a "
            "later --resume will not know which ones finished",
            JournalWarning,
            stacklevel=4,  # the user's `agentcell.map(...)`
        )
        return Manifest.read_only(path)
