"""Hostile tools, models, bytes and disks (issue 17): each test reproduces one defect and pins its fix.

The scripted models and template helpers are the engine tests' (`tests/engine/conftest.py`).
"""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
