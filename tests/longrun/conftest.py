"""Shared helpers for the long-run tests: the engine tests' scripted model, plus a journal folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import anyio_backend

__all__ = ["anyio_backend"]


@pytest.fixture
def journal_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh journal folder, also the default for runs that don't name one."""
    folder = tmp_path / "journal"
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(folder))
    return folder
