"""A `show()` run's header names `agentcell`, not `%%agent` (a marimo notebook or a script has no `%%agent` cell)."""

from __future__ import annotations

import pytest

import agentcell
from agentcell.frontends.registry import PYTHON_RUNS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_show_names_agentcell_and_a_plain_widget_names_the_cell() -> None:
    view = agentcell.show("Hi [[answer]]", model="offline:fast", journal=False)
    assert view.origin == "agentcell"
    handle = next(h for h in PYTHON_RUNS.runs.values() if getattr(h, "widget", None) is view)
    await handle
    assert agentcell.AgentWidget().origin == "%%agent"
