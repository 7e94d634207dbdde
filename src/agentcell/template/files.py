"""Reading a file the user named (an include, a `--types` file) without trusting what it is.

`Path.read_text` on a FIFO waits for a writer (the kernel hangs), on `/dev/zero` never ends, and on
a huge file takes all it has. `read_regular` reads only a regular file, and at most `limit` bytes:
the kind is checked before opening (opening a FIFO for reading is what blocks) and again on the
open descriptor (the name may have been replaced in between; `O_NONBLOCK` keeps that open from
waiting), and the read stops past `limit` whatever the file's size says (a `/proc` file says 0).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}  # fmt: skip
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class NotAFile(Exception):
    """The path names something other than a regular file; the message says what (`a FIFO`, …)."""


class TooLarge(Exception):
    """The file holds more than the bytes allowed."""


def read_regular(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `path`; raise `NotAFile`, `TooLarge` or `OSError`."""
    _check_kind(os.stat(path).st_mode)
    fd = os.open(path, _FLAGS)
    try:
        _check_kind(os.fstat(fd).st_mode)
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise TooLarge(f"more than {limit:,} bytes")
    return b"".join(chunks)


def _check_kind(mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise NotAFile(_KINDS.get(stat.S_IFMT(mode), "not a regular file"))


def shown(name: str, limit: int = 120) -> str:
    """`repr(name)`, cut in the middle when long (a 5,000-character path makes an unreadable error)."""
    if len(name) <= limit:
        return repr(name)
    return f"{name[: limit // 2]!r}…{name[-limit // 4 :]!r} ({len(name):,} characters)"


__all__ = ["NotAFile", "TooLarge", "read_regular", "shown"]
