"""The documentation site covers what it must: every public name has an API reference entry, every notebook a
page, every page in `docs/` a place in the navigation. (`scripts/docs` builds the site with `mkdocs build
--strict`, which fails on broken links and unresolved references; these checks need no mkdocs installed.)"""

from __future__ import annotations

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
