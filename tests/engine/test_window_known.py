"""The context gauge states a window as a fact only when it is known: a model no table knows gets
`window_known=False` (its window is only assumed, for compaction), a known model, `context_window=` and the
offline model get `True`."""

from __future__ import annotations

import pytest

from agentcell.engine import start_run
from agentcell.engine.context import DEFAULT_WINDOW, window_for, window_known
from tests.openai_server import FakeOpenAI, Reply, Text, Usage

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("name", "override", "offline", "known"), [
    ("openai:gpt-4o-mini", None, False, True),
    ("openai-compat:my-local-model@http://127.0.0.1:1/v1", None, False, False),
    ("openai-compat:my-local-model@http://127.0.0.1:1/v1", 8192, False, True),
    ("offline", None, True, True),
])
def test_window_known(name: str, override: int | None, offline: bool, known: bool) -> None:
    assert window_known(name, override=override, offline=offline) is known
    if not known:
        assert window_for(name, override=override, offline=offline) == DEFAULT_WINDOW


async def test_an_unknown_models_gauge_event_says_its_window_is_assumed() -> None:
    with FakeOpenAI() as server:
        server.script(Reply(Text("Hi."), Usage(10, 5), model="my-local-model"))
        run = start_run("Hi [[answer]]", model=f"openai-compat:my-local-model@{server.base_url}", journal=False)
        await run
    gauges = [e for e in run.events_so_far if e.kind == "context_updated"]
    assert gauges and all(g.window_known is False for g in gauges)
