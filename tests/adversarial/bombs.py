"""The issue-40 bombs, shared by the unit tests and the kernel test: a YAML alias bomb and an include bomb."""

from __future__ import annotations

from pathlib import Path

FILLER = "Some filler text for the rubric. " * 72  # 2.4 KB, as in the issue


def alias_bomb(levels: int) -> str:
    """The issue's `--types` file: each level a mapping of six aliases of the level below (6**levels paths)."""
    lines = ["name: Bomb", "fields: &a0 {x: str, y: str}"]
    for i in range(1, levels):
        lines.append(f"description{i}: &a{i} {{" + ", ".join(f"k{j}: *a{i - 1}" for j in range(6)) + "}")
    return "\n".join(lines) + "\n"


def include_bomb(folder: Path, breadth: int, text: str = FILLER) -> None:
    """The issue's templates: `a.sd` includes `b.sd` `breadth` times, which includes `c.sd` as often."""
    (folder / "c.sd").write_text(text + "\n")
    (folder / "b.sd").write_text(text + '<include src="c.sd"/>' * breadth + "\n")
    (folder / "a.sd").write_text(text + '<include src="b.sd"/>' * breadth + "\n")
