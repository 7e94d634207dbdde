"""Suite-wide: runs journal into a temporary folder, never into the developer's data folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _journal_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get("AGENTCELL_JOURNAL")
    os.environ["AGENTCELL_JOURNAL"] = str(tmp_path_factory.mktemp("journal"))
    yield
    if previous is None:
        os.environ.pop("AGENTCELL_JOURNAL", None)
    else:
        os.environ["AGENTCELL_JOURNAL"] = previous
