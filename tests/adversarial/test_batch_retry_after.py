"""A huge `Retry-After` in a batch (issue 40, item 6).

Before: a 429 asking for `Retry-After: 99999999` (or naming a date in 2099) paused the batch's shared throttle
for that long. The row that met it gave up at once (a single run does not wait more than its retry policy's
`max_retry_after`), but every other row waited for the throttle: the batch froze for 1,157 days (or 73 years)
and nothing said why. Now the shared pause is capped as the rows' retry policy caps a `Retry-After`
(120 s by default): the row that met it fails with the provider's message, the others go on after the capped
pause, and the widget's progress carries a note that says what was asked and what was waited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from agentcell.batch import map
from agentcell.batch.throttle import GatedModel, Throttle, gated
from agentcell.frontends.widget.batch_view import BatchWidget
from agentcell.providers.compat import openai_compatible
from agentcell.providers.models import resolve_model
from agentcell.providers.retry import RetryingModel, RetryPolicy
from tests.batch.test_server import shout
from tests.openai_server import Fail, FakeOpenAI

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"
WORDS = [f"w{i:02d}" for i in range(8)]
HUGE = {"seconds": "99999999", "date": "Thu, 01 Jan 2099 00:00:00 GMT"}


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=shout(pieces=2, delay=0.02)) as fake:
        yield fake


def test_the_shared_pause_is_capped_by_the_rows_retry_policy(server: FakeOpenAI) -> None:
    throttle = Throttle()
    shared = gated(resolve_model(f"openai-compat:fake-model@{server.base_url}").model, throttle)
    assert isinstance(shared, RetryingModel) and isinstance(shared.wrapped, GatedModel)
    assert throttle.rate_limited(99999999.0) == RetryPolicy().max_retry_after == 120.0  # before: 99999999
    assert throttle.paused_for <= 120.0
    assert throttle.note == ("the provider asked to wait 1,157 days (Retry-After); the batch paused 2 min, "
                             "the most a retry waits")
    assert throttle.rate_limited(2.5) == 2.5 and throttle.note is None  # an ordinary Retry-After is waited exactly


@pytest.mark.parametrize("retry_after", list(HUGE.values()), ids=list(HUGE))
async def test_a_huge_retry_after_does_not_freeze_the_batch(server: FakeOpenAI, retry_after: str) -> None:
    server.script(Fail(429, "Rate limit reached", type="requests", code="rate_limit_exceeded",
                       headers={"Retry-After": retry_after}))
    model = RetryingModel(openai_compatible("fake-model", server.base_url), policy=RetryPolicy(max_retry_after=0.3))
    batch = map(TEMPLATE, WORDS, model=model, concurrency=2, journal=False)
    widget = BatchWidget(batch)
    widget.send = lambda *_a, **_k: None  # type: ignore[method-assign]  # no front end here
    notes: list[Any] = []
    batch.watch(lambda _row: notes.append(widget.progress()["pause_note"]))
    result = await asyncio.wait_for(batch.wait(), 60)  # a hang guard: before, the batch waited for years
    assert batch.throttle.pauses == 1
    failed = [r for r in result.rows if r.status == "failed"]
    assert len(failed) == 1 and "429" in (failed[0].error or "")  # the row that met it gives up, as a run does
    assert [r.results["answer"] for r in result.rows if r.status == "completed"] == [
        w.upper() for i, w in enumerate(WORDS) if i != failed[0].index]
    said = next(n for n in notes if n)
    assert said.startswith("the provider asked to wait ") and ("1,157 days" in said or "years" in said)
    assert "the batch paused 0.3 s" in said
