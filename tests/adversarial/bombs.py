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
    """The issue's templates: three files that each include the next `breadth` times (`a.sd` → `b.sd` →
    `c.sd` → `d.sd`): `breadth`³ copies of `d.sd` (100: a million, 2.4 GB of text)."""
    (folder / "d.sd").write_text(text + "\n")
    for name, inner in (("c", "d"), ("b", "c"), ("a", "b")):
        (folder / f"{name}.sd").write_text(text + f'<include src="{inner}.sd"/>' * breadth + "\n")
