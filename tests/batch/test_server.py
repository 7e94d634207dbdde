"""A batch against the OpenAI-compatible fixture server: Stop closes every request in flight, `resume`
runs only what is left, and a 429 pauses every row."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcell.batch import map
from tests.openai_server import Fail, FakeOpenAI, Reply, Scripted, Text

pytestmark = pytest.mark.anyio

TEMPLATE = "SHOUT: {{ item }} [[answer]]"
WORDS = [f"w{i:02d}" for i in range(50)]


def shout(pieces: int, delay: float) -> Any:
    def answer(body: dict[str, Any]) -> Scripted:
        prompt = str(body["messages"][-1]["content"])
        word = re.search(r"SHOUT: (\S+)", prompt)
        text = (word.group(1) if word else "?").upper()
        staggered = pieces + sum(ord(c) for c in text) % 5  # rows finish at different times
        return Reply(Text(text, pieces=staggered, delay=delay))

    return answer


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=shout(pieces=4, delay=0.05)) as fake:
        yield fake


def model(server: FakeOpenAI) -> str:
    return f"openai-compat:fake-model@{server.base_url}"


async def until(check: Any, timeout: float = 30.0) -> None:
    """Wait for `check()`; a hang guard (raises `TimeoutError` after `timeout` s), not a time limit under test."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise TimeoutError(f"hung: {check} did not hold within {timeout} s")
        await asyncio.sleep(0.01)


async def test_stop_at_30_percent_closes_every_request_and_resume_runs_only_the_rest(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    batch = map(TEMPLATE, WORDS, model=model(server), concurrency=6, journal=tmp_path)
    in_flight = lambda: [r for r in server.chat_requests if r.outcome == "pending" and r.chunks_sent > 0]  # noqa: E731
    await until(lambda: sum(r.status == "completed" for r in batch.rows) >= 15 and len(in_flight()) >= 2)
    batch.cancel()
    first = await batch

    counts = first.counts
    assert first.status == "stopped"
    assert counts["completed"] >= 15 and counts.get("not_started", 0) > 0
    assert sum(counts.values()) == 50
    assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("agentcell-")]  # no pending task
    requests = server.chat_requests
    await until(lambda: all(r.outcome != "pending" for r in requests), timeout=5)
    outcomes = [r.outcome for r in requests]
    # A response whose last chunk was already on its way when Stop landed completes on the server while
    # its row ends stopped; every other request still in flight at Stop saw its connection closed.
    assert counts["completed"] <= outcomes.count("completed") <= counts["completed"] + counts["stopped"]
    assert outcomes.count("disconnected") == len(requests) - outcomes.count("completed")
    assert outcomes.count("disconnected") >= 1

    again = map(TEMPLATE, WORDS, model=model(server), concurrency=6, journal=tmp_path, resume=True)
    second = await again
    assert second.status == "completed"
    assert [r["answer"] for r in second.to_records()] == [w.upper() for w in WORDS]
    # Only the rest ran, each once. Counted by the requests the server completed: a request the first batch
    # sent just before Stop can reach the server's record after the snapshot above (its thread is late under
    # load: seen once in a full suite, 33 requests for 32 rows); the client had gone by then, so it ends
    # disconnected and is not the resumed batch's.
    later = server.chat_requests[len(requests):]
    await until(lambda: all(r.outcome != "pending" for r in later), timeout=5)
    assert [r.outcome for r in later].count("completed") == 50 - counts["completed"], [r.outcome for r in later]
    assert len(later) - [r.outcome for r in later].count("completed") <= 6  # late ones: at most the rows in flight
    assert sum(r.resumed for r in second.rows) == counts["completed"]
    assert [r.run_id for r in second.rows if r.resumed] == [r.run_id for r in first.rows if r.status == "completed"]


async def test_resume_after_a_complete_batch_sends_nothing(server: FakeOpenAI, tmp_path: Path) -> None:
    await map(TEMPLATE, WORDS[:5], model=model(server), journal=tmp_path)
    sent = len(server.chat_requests)
    result = await map(TEMPLATE, WORDS[:5], model=model(server), journal=tmp_path, resume=True)
    assert len(server.chat_requests) == sent == 5
    assert all(r.resumed and r.status == "completed" for r in result.rows)
    # Another template, or other row content, is not "done".
    changed = await map(TEMPLATE, ["w00", "new"], model=model(server), journal=tmp_path, resume=True)
    assert [r.resumed for r in changed.rows] == [True, False]
    other = await map("SHOUT: {{ item }}! [[answer]]", WORDS[:1], model=model(server), journal=tmp_path, resume=True)
    assert [r.resumed for r in other.rows] == [False]


async def test_a_429_pauses_every_row_for_the_retry_after(server: FakeOpenAI, tmp_path: Path) -> None:
    server.default = shout(pieces=2, delay=0.05)
    server.script(Fail(429, "Rate limit reached", retry_after=0.3, type="requests", code="rate_limit_exceeded"))
    batch = map(TEMPLATE, WORDS[:12], model=model(server), concurrency=4, journal=False)
    result = await batch
    assert [r.results.get("answer") for r in result.rows] == [w.upper() for w in WORDS[:12]]
    assert batch.throttle.pauses == 1
    refused = next(r for r in server.chat_requests if r.status == 429)
    assert refused.finished_at is not None
    end = refused.finished_at
    during = [r for r in server.chat_requests if end < r.received_at < end + 0.3]
    after = [r for r in server.chat_requests if r.received_at >= end + 0.3]
    # While the batch was paused only requests already on their way (the 3 other rows) arrived; the
    # retried row and every row not yet started waited for the Retry-After.
    assert len(during) <= 3
    assert len(after) >= 12 - 4
