"""The offline model says whether it was chosen (`-m offline`, `AGENTCELL_MODEL=offline`) or answers because no
model was configured: the header badge and the saved view read "offline (chosen)" or "offline default model"."""

from __future__ import annotations

import pytest

from agentcell.engine import start_run
from agentcell.events.json import to_wire
from agentcell.providers.models import resolve_model
from agentcell.render.html import render_html

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("model", "env", "chosen"), [
    (None, None, False),
    ("offline", None, True),
    ("offline:fast", None, True),
    (None, "offline:fast", True),
])
def test_chosen_or_default(monkeypatch: pytest.MonkeyPatch, model: str | None, env: str | None, chosen: bool) -> None:
    if env is None:
        monkeypatch.delenv("AGENTCELL_MODEL", raising=False)
    else:
        monkeypatch.setenv("AGENTCELL_MODEL", env)
    resolved = resolve_model(model)
    assert resolved.offline and resolved.chosen is chosen


@pytest.mark.parametrize(("model", "badge"), [(None, "offline default model"), ("offline:fast", "offline (chosen)")])
async def test_the_run_and_its_saved_view_say_which(monkeypatch: pytest.MonkeyPatch, model: str | None, badge: str) -> None:
    monkeypatch.delenv("AGENTCELL_MODEL", raising=False)
    monkeypatch.setattr("agentcell.providers.models.OFFLINE_DELAYS", {"": 0.0, "fast": 0.0, "slow": 0.0})
    run = start_run("Hi [[answer]]", model=model, journal=False)
    await run
    started = run.events_so_far[0]
    assert started.kind == "run_started" and started.offline_chosen is (model is not None)
    assert badge in render_html([to_wire(e, t=0.0) for e in run.events_so_far])
