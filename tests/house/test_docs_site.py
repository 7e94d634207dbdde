"""The documentation site covers what it must: every public name has an API reference entry, every notebook a
page, every page in `docs/` a place in the navigation. (`scripts/docs` builds the site with `mkdocs build
--strict`, which fails on broken links and unresolved references; these checks need no mkdocs installed.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import agentcell

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MKDOCS = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
REFERENCE = (DOCS / "reference.md").read_text(encoding="utf-8")


def _nav_targets() -> set[str]:
    """The files the navigation names (commented-out lines are slots for pages not written yet)."""
    nav = MKDOCS[MKDOCS.index("\nnav:") :]
    return {m.group(1) for line in nav.splitlines() if not line.lstrip().startswith("#")
            for m in [re.search(r":\s*(\S+\.(?:md|ipynb))\s*$", line)] if m}


def test_every_public_name_has_a_reference_entry() -> None:
    entries = set(re.findall(r"^::: agentcell(?:\.[\w.]+)?\.(\w+)\s*$", REFERENCE, flags=re.MULTILINE))
    entries |= set(re.findall(r"^### `(\w+)`\s*$", REFERENCE, flags=re.MULTILINE))  # a data name: described
    assert sorted(set(agentcell.__all__) - entries) == []


def test_each_reference_entry_names_the_module_that_defines_it() -> None:
    for module, name in re.findall(r"^::: (agentcell(?:\.[\w.]+)?)\.(\w+)\s*$", REFERENCE, flags=re.MULTILINE):
        assert agentcell._EXPORTS.get(name, "agentcell") == module, name


def test_every_notebook_is_a_page() -> None:
    notebooks = {f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb") if ".executed." not in p.name}
    assert notebooks
    assert sorted(notebooks - _nav_targets()) == []


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    targets = _nav_targets()
    assert sorted(pages - targets) == []
    written = {t for t in targets if t.endswith(".md")}
    assert sorted(written - pages) == []


def test_the_performance_page_shows_benchmarks_own_summary() -> None:
    """The page once carried a copy of BENCHMARKS.md's table that went stale; now the build hook reads the table.

    The hook must find the table (a renamed section fails here, not on the docs build), keep one row per goal,
    drop the commit column and leave no link into BENCHMARKS.md's own anchors.
    """
    spec = importlib.util.spec_from_file_location("mkdocs_benchmarks", ROOT / "scripts" / "mkdocs_benchmarks.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    benchmarks = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    table = hook.summary_table(benchmarks).splitlines()
    summary = benchmarks.split("\n## Summary\n", 1)[1].split("\n## ", 1)[0]
    assert len(table) == sum(1 for line in summary.splitlines() if line.startswith("|"))
    assert table[0] == "| Goal | Latest figure | Met? |"
    assert "](#" not in "\n".join(table)
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert hook.MARKER in page and "| Goal |" not in page
    assert "scripts/mkdocs_benchmarks.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
