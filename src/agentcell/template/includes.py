"""Where `<include src="…"/>` and `{% include "…" %}` find their files, and the guards on what they may read.

An included file is parsed on its own (its own `Source`, so its errors name it and point at its line
and column) and its nodes take the include's place. The top-level cell searches its base directory
(the notebook's, i.e. the working directory, unless told otherwise) and then the configured include
paths; an included file searches its own directory first.

A template is user input, and a shared one may be hostile, so an include is bounded:

* it reads only inside the base directory and the include paths: an absolute path, a `..` or a
  symlink that leads out of them is refused (`/proc/self/environ` is a regular file too). A user
  who wants any file opts in with an include path of `/` (`--include-path /`);
* it reads a regular file only (`files.read_regular`: a FIFO would wait for a writer forever);
* a file that includes itself, directly or through others, is an error that shows the chain; so is
  nesting deeper than `MAX_DEPTH`;
* one compile includes at most `MAX_INCLUDES` files and `MAX_INCLUDED_BYTES` bytes of them
  together: three 2.4 KB files that each include the next 100 times would otherwise splice in
  2.4 GB (depth and cycles are no guard against breadth).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .files import NotAFile, TooLarge, read_regular, shown
from .frozen import faster_init

MAX_DEPTH = 16
"""Includes nested deeper than this are refused (a chain that long is almost surely a mistake)."""
MAX_INCLUDES = 500
"""Most includes one compile resolves (each time a file is included counts)."""
MAX_INCLUDED_BYTES = 1_000_000
"""Most bytes of included text one compile splices in, all includes together."""


class IncludeError(Exception):
    """An include cannot be resolved; the message reads well after a location."""


@dataclass(frozen=True, slots=True)
class IncludeFile:
    """A file found for an include: where it is, how errors name it, and its text."""

    path: Path
    name: str
    text: str


@dataclass(slots=True)
class Spent:
    """What one compile's includes have read so far (shared by every `Includes` of that compile)."""

    files: int = 0
    bytes: int = 0


@dataclass(frozen=True, slots=True)
class Includes:
    """The search path of one compile, and the chain of files being included right now."""

    base: Path | None = None
    """The directory the cell's own includes are relative to (`None`: the working directory)."""
    paths: tuple[Path, ...] = ()
    """More directories to search, in order (`--include-path`)."""
    chain: tuple[Path, ...] = ()
    """The files being included, outermost first (for cycle errors)."""
    spent: Spent = field(default_factory=Spent, compare=False)

    @classmethod
    def create(cls, base: str | Path | None, paths: Sequence[str | Path]) -> Includes:
        return cls(None if base is None else Path(base), tuple(Path(p) for p in paths))

    def load(self, written: str) -> tuple[IncludeFile, Includes]:
        """The file `written` names and the `Includes` its own includes use; raise `IncludeError`."""
        if not written.strip():
            raise IncludeError('an include needs a file name: <include src="file.sd"/>')
        path = self.find(written)
        resolved = _resolved(path, written)
        if resolved in self.chain:
            raise IncludeError(f"include cycle: {self.chain_to(resolved, self.chain.index(resolved))}")
        if len(self.chain) >= MAX_DEPTH:
            raise IncludeError(f"includes are nested more than {MAX_DEPTH} deep")
        self.check_inside(written, resolved)
        if self.spent.files >= MAX_INCLUDES:
            raise IncludeError(f"more than {MAX_INCLUDES} includes in one cell (at {self.chain_to(resolved)}); "
                               "include fewer files, or the same file fewer times")  # fmt: skip
        text = self.read(written, resolved)
        self.spent.files += 1
        inner = Includes(self.base, self.paths, (*self.chain, resolved), self.spent)
        return IncludeFile(path=resolved, name=str(path), text=text), inner

    def read(self, written: str, resolved: Path) -> str:
        left = MAX_INCLUDED_BYTES - self.spent.bytes
        try:
            data = read_regular(resolved, left)
            text = data.decode("utf-8")
        except TooLarge:
            raise IncludeError(f"included text passes {MAX_INCLUDED_BYTES:,} bytes in all (at "
                               f"{self.chain_to(resolved)}); include fewer or smaller files") from None  # fmt: skip
        except NotAFile as exc:
            raise IncludeError(f"included file {shown(written)} is {exc}, not a file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise IncludeError(f"cannot read included file {shown(written)}: {_reason(exc)}") from None
        self.spent.bytes += len(data)
        return text

    def chain_to(self, resolved: Path, start: int = 0) -> str:
        return " → ".join(p.name for p in (*self.chain[start:], resolved))

    def find(self, written: str) -> Path:
        candidate = _expanded(written)
        if candidate.is_absolute():
            if _is_file(candidate, written):
                return candidate
            raise IncludeError(f"included file {shown(written)} does not exist")
        searched = self.directories()
        for directory in searched:
            found = directory / candidate
            if _is_file(found, written):
                return found
        where = ", ".join(str(d) for d in searched)
        raise IncludeError(f"included file {shown(written)} not found (searched: {where})")

    def directories(self) -> list[Path]:
        """Where a relative include is looked for: the including file's directory, the base, the paths."""
        dirs = [self.chain[-1].parent] if self.chain else []
        return list(dict.fromkeys([*dirs, self.base_dir(), *self.paths]))

    def base_dir(self) -> Path:
        return self.base if self.base is not None else Path.cwd()

    def check_inside(self, written: str, resolved: Path) -> None:
        """Refuse a file outside the base directory and the include paths (after symlinks are followed)."""
        roots = [_resolved(d, str(d)) for d in (self.base_dir(), *self.paths)]
        if any(resolved.is_relative_to(root) for root in roots):
            return
        raise IncludeError(
            f"included file {shown(written)} is outside the notebook's folder and the include paths "
            f"({resolved}); an include reads only there unless you allow any file with --include-path / "
            "(include_paths=['/'] from Python)"
        )


def _expanded(written: str) -> Path:
    try:
        return Path(written).expanduser()
    except RuntimeError:  # `~nosuchuser/…`: no home to expand to, so it is a name like any other
        return Path(written)


def _is_file(path: Path, written: str) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError) as exc:  # a name too long for the file system; a NUL in it
        raise IncludeError(f"cannot look for included file {shown(written)}: {_reason(exc)}") from None


def _resolved(path: Path, written: str) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop, a name too long
        raise IncludeError(f"cannot look for included file {shown(written)}: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


faster_init(IncludeFile, Includes)
