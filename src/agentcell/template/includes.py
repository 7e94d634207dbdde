"""Where `<include src="…"/>` and `{% include "…" %}` find their files, and the guard against cycles.

An included file is parsed on its own (its own `Source`, so its errors name it and point at its line
and column) and its nodes take the include's place. The top-level cell searches its base directory
(the notebook's, i.e. the working directory, unless told otherwise) and then the configured include
paths; an included file searches its own directory first. A file that includes itself, directly or
through others, is an error that shows the chain; so is nesting deeper than `MAX_DEPTH`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .frozen import faster_init

MAX_DEPTH = 16
"""Includes nested deeper than this are refused (a chain that long is almost surely a mistake)."""


class IncludeError(Exception):
    """An include cannot be resolved; the message reads well after a location."""


@dataclass(frozen=True, slots=True)
class IncludeFile:
    """A file found for an include: where it is, how errors name it, and its text."""

    path: Path
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Includes:
    """The search path of one compile, and the chain of files being included right now."""

    base: Path | None = None
    """The directory the cell's own includes are relative to (`None`: the working directory)."""
    paths: tuple[Path, ...] = ()
    """More directories to search, in order (`--include-path`)."""
    chain: tuple[Path, ...] = ()
    """The files being included, outermost first (for cycle errors)."""

    @classmethod
    def create(cls, base: str | Path | None, paths: Sequence[str | Path]) -> Includes:
        return cls(None if base is None else Path(base), tuple(Path(p) for p in paths))

    def load(self, written: str) -> tuple[IncludeFile, Includes]:
        """The file `written` names and the `Includes` its own includes use; raise `IncludeError`."""
        if not written.strip():
            raise IncludeError('an include needs a file name: <include src="file.sd"/>')
        path = self.find(written)
        resolved = path.resolve()
        if resolved in self.chain:
            names = " → ".join(p.name for p in (*self.chain[self.chain.index(resolved) :], resolved))
            raise IncludeError(f"include cycle: {names}")
        if len(self.chain) >= MAX_DEPTH:
            raise IncludeError(f"includes are nested more than {MAX_DEPTH} deep")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise IncludeError(f"cannot read included file {written!r}: {exc}") from None
        inner = Includes(self.base, self.paths, (*self.chain, resolved))
        return IncludeFile(path=resolved, name=str(path), text=text), inner

    def find(self, written: str) -> Path:
        candidate = Path(written).expanduser()
        if candidate.is_absolute():
            if candidate.is_file():
                return candidate
            raise IncludeError(f"included file {written!r} does not exist")
        searched = self.directories()
        for directory in searched:
            found = directory / candidate
            if found.is_file():
                return found
        where = ", ".join(str(d) for d in searched)
        raise IncludeError(f"included file {written!r} not found (searched: {where})")

    def directories(self) -> list[Path]:
        """Where a relative include is looked for: the including file's directory, the base, the paths."""
        base = self.base if self.base is not None else Path.cwd()
        dirs = [self.chain[-1].parent] if self.chain else []
        return list(dict.fromkeys([*dirs, base, *self.paths]))


faster_init(IncludeFile, Includes)
