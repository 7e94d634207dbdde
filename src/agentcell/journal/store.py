"""The journal folder over time: listing runs, a retention rule, and `%agent journal` list/clean.

Every run journals by default, so the folder would only grow. When a run opens its journal in the default
folder, journals beyond the retention rule are removed: by default the newest `KEEP_RUNS` runs are kept and
none older than `KEEP_DAYS` days (`AGENTCELL_JOURNAL_KEEP_RUNS`, `AGENTCELL_JOURNAL_KEEP_DAYS`; `0` turns that
limit off). A batch counts as one run: its rows journal in a folder of their own (`batches/<template hash>/`,
beside its manifest), kept or removed together, so a batch of 3,000 rows never evicts the notebook's single
runs and a row's transcript lasts as long as its batch. A folder someone named (`journal="…"`) is never
cleaned automatically: it may hold their own `.jsonl` files. Only files named like a journal
(`<run id>.jsonl`) are ever touched.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..errors import AgentcellError
from .paths import BATCHES, RUN_ID, default_dir

KEEP_RUNS = 200
KEEP_DAYS = 30.0
KEEP_RUNS_ENV = "AGENTCELL_JOURNAL_KEEP_RUNS"
KEEP_DAYS_ENV = "AGENTCELL_JOURNAL_KEEP_DAYS"


@dataclass(frozen=True, slots=True, kw_only=True)
class Retention:
    """Which journals to keep: the newest `runs` (`None`: any number), none older than `days` (`None`: any age)."""

    runs: int | None = KEEP_RUNS
    days: float | None = KEEP_DAYS

    @classmethod
    def from_env(cls) -> Retention:
        """The default rule, with `AGENTCELL_JOURNAL_KEEP_RUNS` / `_KEEP_DAYS` applied (`0`: no limit)."""
        runs = _number(KEEP_RUNS_ENV, KEEP_RUNS)
        days = _number(KEEP_DAYS_ENV, KEEP_DAYS)
        return cls(runs=None if runs <= 0 else int(runs), days=None if days <= 0 else days)


def _number(var: str, default: float) -> float:
    try:
        return float(os.environ.get(var, "").strip() or default)
    except ValueError:
        return default


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalFile:
    """One run's journal on disk."""

    run_id: str
    path: Path
    size: int
    """Bytes."""
    modified: float
    """When it was last written (seconds since the epoch)."""
    batch: bool = False
    """A batch's rows (`path` is their folder, `run_id` the template hash), kept or removed as one."""


def list_runs(folder: Path | None = None) -> list[JournalFile]:
    """The journals in `folder` (default: the journal folder), newest first."""
    folder = default_dir() if folder is None else folder
    found: list[JournalFile] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise AgentcellError(f"cannot list the journal folder {folder}: {exc}") from None
    for entry in entries:
        run_id = entry.name.removesuffix(".jsonl")
        if not entry.name.endswith(".jsonl") or not RUN_ID.fullmatch(run_id) or ".." in run_id:
            continue
        with contextlib.suppress(OSError):  # removed meanwhile, or not a file
            stat = entry.stat()
            if entry.is_file():
                path, size, modified = Path(entry.path), stat.st_size, stat.st_mtime
                found.append(JournalFile(run_id=run_id, path=path, size=size, modified=modified))
    return sorted(found, key=lambda f: (f.modified, f.run_id), reverse=True)


def clean(
    folder: Path | None = None,
    *,
    keep: Retention | None = None,
    exclude: Collection[str] = (),
    now: float | None = None,
) -> list[JournalFile]:
    """Remove the journals `keep` does not keep (default: `Retention.from_env()`); return those removed."""
    keep = Retention.from_env() if keep is None else keep
    now = time.time() if now is None else now
    removed: list[JournalFile] = []
    units = sorted([*list_runs(folder), *list_batches(folder)], key=lambda f: (f.modified, f.run_id), reverse=True)
    for rank, item in enumerate(units):
        too_many = keep.runs is not None and rank >= keep.runs
        too_old = keep.days is not None and now - item.modified > keep.days * 86_400
        if item.run_id in exclude or not (too_many or too_old):
            continue
        with contextlib.suppress(FileNotFoundError):
            if item.batch:
                _remove_batch(item.path)
            else:
                item.path.unlink()
            removed.append(item)
    return removed


_BATCH_NAME = re.compile(r"[0-9a-f]{16}")


def list_batches(folder: Path | None = None) -> list[JournalFile]:
    """The batches journalled in `folder` (default: the journal folder), newest first: one entry per template,
    its rows' folder and manifest together, as recent as the later of the two."""
    base = (default_dir() if folder is None else folder) / BATCHES
    try:
        entries = list(os.scandir(base))
    except OSError:
        return []
    found = []
    for entry in entries:
        if not _BATCH_NAME.fullmatch(entry.name.removesuffix(".jsonl")):
            continue
        with contextlib.suppress(OSError):
            name = entry.name.removesuffix(".jsonl")
            times = [os.stat(p).st_mtime for p in (base / name, base / f"{name}.jsonl") if p.exists()]
            if entry.name.endswith(".jsonl") and (base / name).is_dir():
                continue  # counted with its folder
            found.append(JournalFile(run_id=name, path=base / name, size=0, modified=max(times), batch=True))
    return sorted(found, key=lambda f: (f.modified, f.run_id), reverse=True)


def _remove_batch(path: Path) -> None:
    """Remove a batch's rows' journals (files named like one only), their folder once empty, and its manifest."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(path):
            if entry.name.endswith(".jsonl") and RUN_ID.fullmatch(entry.name.removesuffix(".jsonl")):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
        path.rmdir()
    with contextlib.suppress(FileNotFoundError):
        path.with_suffix(".jsonl").unlink()


PRUNE_EVERY_S = 30.0
"""The default folder is pruned at most this often per process: listing it stats every journal (up to
`KEEP_RUNS` of them), which a batch of many short runs would otherwise pay per run."""
_pruned: dict[Path, float] = {}


def prune_default(path: Path, *, run_id: str) -> None:
    """Apply the retention rule when a run journals into the default folder (never elsewhere, never raising);
    at most once every `PRUNE_EVERY_S` seconds (the rule is a bound on the folder, not an exact count)."""
    folder = path.parent
    now = time.monotonic()
    last = _pruned.get(folder)
    if last is not None and now - last < PRUNE_EVERY_S:
        return  # asked again soon after (a batch's rows): not even `default_dir()` (it reads the environment)
    _pruned[folder] = now
    if folder != default_dir():
        return
    with contextlib.suppress(OSError, AgentcellError):
        clean(folder, exclude={run_id})


def describe(files: list[JournalFile], *, folder: Path | None = None) -> str:
    """`%agent journal`'s listing: one run per line, newest first, with the folder and the total."""
    folder = default_dir() if folder is None else folder
    if not files:
        return f"no journals in {folder}"
    total = sum(f.size for f in files)
    lines = [f"{len(files)} journal(s) in {folder}, {_size(total)}:"]
    for f in files:
        when = datetime.fromtimestamp(f.modified).strftime("%Y-%m-%d %H:%M")
        lines.append(f"  {f.run_id:<16} {when}  {_size(f.size):>9}")
    return "\n".join(lines)


def journal_command(words: list[str]) -> str:
    """`%agent journal [list] | clean [all | DAYS]`: list the journals, or remove old ones; returns what to print.

    `clean` applies the retention rule; `clean DAYS` removes journals older than DAYS days; `clean all`
    removes every journal in the folder.

    Raises:
        AgentcellError: the words do not make a journal command.
    """
    usage = "usage: %agent journal [list] | %agent journal clean [all | DAYS]"
    if words in ([], ["list"]):
        return describe(list_runs())
    if not words or words[0] != "clean" or len(words) > 2:
        raise AgentcellError(usage)
    if len(words) == 1:
        keep = Retention.from_env()
    elif words[1] == "all":
        keep = Retention(runs=0, days=None)
    else:
        try:
            keep = Retention(runs=None, days=float(words[1]))
        except ValueError:
            raise AgentcellError(usage) from None
    removed = clean(keep=keep)
    return f"removed {len(removed)} journal(s), {_size(sum(f.size for f in removed))}, from {default_dir()}"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"
