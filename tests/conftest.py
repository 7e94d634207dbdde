"""Suite-wide: runs journal into a temporary folder, never into the developer's data folder; a module marked
whole with a mark that `-m` leaves out is not even imported."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

WHOLE_MODULE_MARK = re.compile(r"^pytestmark = pytest\.mark\.(\w+)\b", re.M)


@pytest.fixture(autouse=True, scope="session")
def _journal_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get("AGENTCELL_JOURNAL")
    os.environ["AGENTCELL_JOURNAL"] = str(tmp_path_factory.mktemp("journal"))
    yield
    if previous is None:
        os.environ.pop("AGENTCELL_JOURNAL", None)
    else:
        os.environ["AGENTCELL_JOURNAL"] = previous


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`-m "not kernel and not browser and not slow"` (`scripts/test --fast`) would import a kernel-only module
    just to deselect every test in it, and some imports cost seconds (nbformat's schema checker builds a
    grammar). In a pure conjunction, `not X` leaves out every test marked X, so a module whose
    `pytestmark` is X can be skipped whole; with an `or` or parentheses nothing is skipped here."""
    markexpr = config.getoption("markexpr") or ""
    if not markexpr or collection_path.suffix != ".py" or re.search(r"\bor\b|\(", markexpr):
        return None
    found = WHOLE_MODULE_MARK.search(collection_path.read_text())
    if found and re.search(rf"\bnot\s+{found.group(1)}\b", markexpr):
        return True
    return None
