"""Where journals live, which run ids may name one, and keeping the folder and files private."""

from __future__ import annotations

import contextlib
import functools
import os
import re
from pathlib import Path

from ..errors import AgentcellError

JOURNAL_ENV = "AGENTCELL_JOURNAL"
OFF = frozenset({"0", "off", "false", "no", "none"})
BATCHES = "batches"
"""The journal folder's subfolder of batches: `<template hash>.jsonl` (a batch's manifest) and the folder
`<template hash>/` holding its rows' run journals (retention counts the two as one journal: `store.py`)."""
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")
"""A run id is a file name: letters, digits, `-`, `_`, `.`; at most 128; no `..`, no separators."""

JournalOption = bool | str | os.PathLike[str] | None
"""`None`: the default (on, unless `AGENTCELL_JOURNAL=off`); `False`: off; `True`: the default folder;
a folder, or a `.jsonl` file path."""


def check_run_id(run_id: str) -> str:
    """`run_id` if it can name a journal file; else `AgentcellError` (before anything is written)."""
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise AgentcellError(
            f"invalid run id {run_id!r}: use 1-128 letters, digits, '-', '_' or '.', starting with a letter or "
            "digit and without '..' (a run id names its journal file)"
        )
    return run_id


def default_dir() -> Path:
    """`$AGENTCELL_JOURNAL` if it names a folder, else the per-user data folder's `agentcell/journal`.

    Asked up to three times per run (a batch row is a run): answered from the environment variables it
    depends on, so a changed variable is seen at once and an unchanged one costs a dictionary look-up."""
    return _default_dir(os.environ.get(JOURNAL_ENV, ""), tuple(map(os.environ.get, _HOME_VARIABLES)))


_HOME_VARIABLES = ("XDG_DATA_HOME", "HOME", "USERPROFILE", "LOCALAPPDATA", "APPDATA")
"""What the per-user data folder is derived from, on Linux, macOS and Windows."""


@functools.lru_cache(maxsize=8)
def _default_dir(journal_env: str, _homes: tuple[str | None, ...]) -> Path:
    env = journal_env.strip()
    if env and env.lower() not in OFF:
        return Path(env).expanduser()
    try:
        import platformdirs
    except ImportError:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
        return base / "agentcell" / "journal"
    return Path(platformdirs.user_data_dir("agentcell", appauthor=False)) / "journal"


def journal_path(run_id: str, option: JournalOption = None) -> Path | None:
    """Where run `run_id` is journaled under `option`, or `None` when journaling is off.

    Raises:
        AgentcellError: `run_id` cannot name a file (`check_run_id`).
    """
    check_run_id(run_id)
    if option is False:
        return None
    if option is None and os.environ.get(JOURNAL_ENV, "").strip().lower() in OFF - {""}:
        return None
    if option is None or option is True:
        return default_dir() / f"{run_id}.jsonl"
    path = Path(option).expanduser()
    return path if path.suffix == ".jsonl" else path / f"{run_id}.jsonl"


def private_dir(folder: Path) -> None:
    """Create `folder` readable by its owner only (0700); the default folder is narrowed if it is wider.

    A folder someone named themselves (`journal="~/project"`) keeps the mode it has.
    """
    existed = folder.is_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not existed or folder == default_dir():
        with contextlib.suppress(OSError):  # not ours to change (another user's, a read-only mount)
            folder.chmod(0o700)


def open_private(path: Path) -> AppendFile:
    """Open `path` for appending, readable by its owner only (0600), in a private folder."""
    return open_sized(path)[0]


class AppendFile:
    """A file opened for appending, written with `os.write` only: a journal writes each batch of rows once and
    keeps nothing buffered, so Python's buffered file object (an `fstat`, two `lseek`s and two objects per open,
    a copy per write: a batch opens one per row) would only add work. `flush` has nothing to do."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes | memoryview) -> int:
        """Write all of `data` (`os.write` may take part of it: a full disk, a signal); raises `OSError`, and
        `ValueError` once closed, as a file object does."""
        if self._fd < 0:
            raise ValueError("write to closed file")
        size = len(data)
        done = os.write(self._fd, data)
        if done < size:
            view = memoryview(data)[done:]
            while view:
                view = view[os.write(self._fd, view):]
        return size

    def flush(self) -> None:
        """Nothing is held back: each `write` reached the OS."""

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:  # a journal dropped unclosed (its run's task was destroyed) leaks no descriptor
        with contextlib.suppress(Exception):  # `__del__` must not raise, not even at the interpreter's shutdown
            self.close()


_PRIVATE: set[Path] = set()
"""Folders this process made private already (a batch opens a journal per row in the same folder)."""


def open_sized(path: Path) -> tuple[AppendFile, int]:
    """`open_private`, and the file's size: a new file is created 0600 and is empty (no `chmod`, no `stat`: a batch
    opens one per row); an existing one (a resumed run's) is narrowed to 0600 if an older version left it wider."""
    folder = path.parent
    if folder not in _PRIVATE:
        private_dir(folder)
        _PRIVATE.add(folder)
    try:
        return AppendFile(os.open(path, _APPEND | os.O_CREAT | os.O_EXCL, 0o600)), 0
    except FileExistsError:
        pass
    except FileNotFoundError:  # the folder was removed since this process made it: make it again
        _PRIVATE.discard(folder)
        private_dir(folder)
        _PRIVATE.add(folder)
    fd = os.open(path, _APPEND | os.O_CREAT, 0o600)
    if hasattr(os, "fchmod"):  # a file an older version left 0644 is narrowed too
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o600)
    return AppendFile(fd), os.fstat(fd).st_size


_APPEND = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0)
"""As `open(path, "ab")` opens a file: without newline translation on Windows (`os.open` makes every descriptor
non-inheritable already: an MCP server or a tool's subprocess does not get it)."""
