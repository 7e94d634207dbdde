"""O(1) work per streamed token and O(new messages) per request, pinned by call counts (issue 18).

No test here measures time. Each counts the calls that used to grow with the answer or the history:
pydantic-ai snapshots of the whole response (what a token limit handed to pydantic-ai cost per
event), joins of the answer so far, journal writes, widget messages, `asyncio.Event`s made by the
run's event log, and the characters the context accounting counted.
"""

from __future__ import annotations

import asyncio
import json
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai._parts_manager import ModelResponsePartsManager
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

from agentcell import events, journal
from agentcell.engine import complete_async, context, eventlog, streaming
from agentcell.engine.coalesce import TextCoalescer
from agentcell.engine.compaction import ContextKeeper
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.journal import Journal
from agentcell.options import RunOptions
from agentcell.template import compile_template
from tests.tool_rounds import lookup, rounds_model

pytestmark = pytest.mark.anyio

TOKENS = 100_000


class Counter:
    def __init__(self) -> None:
        self.calls = 0


def count(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> Counter:
    """Count calls of `owner.name` (a function, method or property getter), keeping what it does."""
    counter = Counter()
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    if isinstance(original, property):
        getter = original.fget
        assert getter is not None

        def counted_get(self: Any) -> Any:
            counter.calls += 1
            return getter(self)

        monkeypatch.setattr(owner, name, property(counted_get))
        return counter

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter.calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return counter


def result_events(handle: Any) -> tuple[Any, ...]:
    return handle.run.events_so_far  # type: ignore[no-any-return]


def streaming_model(tokens: int) -> FunctionModel:
    async def fn(_messages: list[Any], _info: AgentInfo) -> Any:
        for i in range(tokens):
            yield f"t{i} "

    return FunctionModel(stream_function=fn)


@pytest.mark.slow  # 100,000 tokens through the engine and the widget path
async def test_a_100k_token_answer_through_the_widget_path_costs_o1_per_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    snapshots = count(monkeypatch, ModelResponsePartsManager, "get_parts")
    shown = count(monkeypatch, streaming.SlotStream, "shown")
    flushes = count(monkeypatch, Journal, "flush")
    journal_timer = count(monkeypatch, Journal, "_timed_flush")
    widget_timer = count(monkeypatch, AgentWidget, "_timed_flush")
    merged = count(monkeypatch, TextCoalescer, "_timed")
    leading = Counter()  # deltas emitted by `add` itself: a leading edge after a quiet interval, or a boundary
    add = TextCoalescer.add

    def counted_add(self: TextCoalescer, *args: Any) -> None:
        before = self.batches
        add(self, *args)
        leading.calls += self.batches - before

    monkeypatch.setattr(TextCoalescer, "add", counted_add)
    made = count(monkeypatch, events.TokenDelta, "__init__")
    events_made = Counter()

    class CountedEvent(asyncio.Event):
        def __init__(self) -> None:
            events_made.calls += 1
            super().__init__()

    monkeypatch.setattr(eventlog, "asyncio", types.SimpleNamespace(**{**vars(asyncio), "Event": CountedEvent}))
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(AgentWidget, "send", lambda self, content, buffers=None: sent.append(content))
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path))
    # The default ceiling (250,000 output tokens) stays in force: agentcell counts it itself.
    options = RunOptions(model=streaming_model(TOKENS))
    handle = launch(LaunchSpec(template=compile_template("Go [[answer]]"), options=options))
    result = await handle
    made_by_the_run = made.calls  # (reading the log below makes its events again)

    assert result.status == "completed"
    assert result.answer == "".join(f"t{i} " for i in range(TOKENS))
    assert handle.widget is not None
    [streamed] = [e for e in handle.widget.final if e["kind"] == "token_delta"]
    assert streamed["text"] is result.answer  # the widget's log keeps no copy of the answer of its own
    # No snapshot of the whole response per token (what a token limit in pydantic-ai cost):
    assert snapshots.calls <= 10
    # The answer so far is never re-joined per token:
    assert shown.calls <= 5
    # The text is merged before it becomes events (`coalesce.py`): a `TokenDelta` per 20 ms timer tick, per
    # leading edge (a piece after a quiet interval: a loaded machine stalls the stream and makes some) and per
    # boundary, not one per token. How many ticks a run spans depends on how fast the machine is, so the bound
    # is the ticks themselves, not a share of the tokens; a leading edge starts a burst a tick then ends.
    deltas = [e for e in result_events(handle) if isinstance(e, events.TokenDelta)]
    assert 1 <= len(deltas) <= merged.calls + leading.calls + 2
    assert leading.calls <= merged.calls + 2
    assert made_by_the_run <= len(deltas) + 10  # no event object per token either
    # The journal writes in batches — one per timer tick plus a few at boundaries (slot and run end) —
    # and a row per merged delta, not per token; it replays the whole answer.
    assert flushes.calls <= journal_timer.calls + 10
    rows = (tmp_path / f"{result.run_id}.jsonl").read_bytes().count(b"\n")
    assert rows <= len(deltas) + 20
    assert journal.load(result.run_id, path=tmp_path).to_result().answer == result.answer
    # The widget sends batches, not a message per token: one per flush-timer tick plus the boundaries.
    assert 1 <= len(sent) <= widget_timer.calls + 10
    delta_text = "".join(e["text"] for m in sent for e in m["events"] if e["kind"] == "token_delta")
    assert delta_text == result.answer
    # The widget is fed synchronously: the run's event log made no `asyncio.Event` at all.
    assert events_made.calls == 0
    assert json.dumps(handle.widget.final[-1]["answer"]) == json.dumps(result.answer)  # type: ignore[union-attr]


async def test_an_async_reader_wakes_per_batch_not_per_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """An async reader behind the run reads every event, and the log makes an `asyncio.Event` only per
    wake-up of a reader that had caught up: never more than one per event."""
    events_made = Counter()

    class CountedEvent(asyncio.Event):
        def __init__(self) -> None:
            events_made.calls += 1
            super().__init__()

    monkeypatch.setattr(eventlog, "asyncio", types.SimpleNamespace(**{**vars(asyncio), "Event": CountedEvent}))
    log = eventlog.EventLog()
    from agentcell.events import TokenDelta

    seen: list[str] = []

    async def read() -> None:
        async for event in log.follow():
            seen.append(getattr(event, "text", ""))
            if len(seen) == 1_000:
                return

    reader = asyncio.create_task(read())
    for i in range(1_000):
        log.append(TokenDelta(run_id="r", slot="a", text=str(i)))
        if i % 100 == 0:
            await asyncio.sleep(0)  # the reader catches up ten times
    await reader
    assert seen == [str(i) for i in range(1_000)]
    assert events_made.calls <= 11


@pytest.mark.parametrize("rounds", [50, 200])
async def test_context_accounting_counts_each_message_once_per_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rounds: int
) -> None:
    """200 tool rounds: the context accounting looks at each message about once, not once per request
    (which was O(n²) per run: 40,601 part counts for 201 requests)."""
    parts = count(monkeypatch, context, "_part_chars")
    views = count(monkeypatch, ContextKeeper, "view")
    result = await complete_async(
        "Go [[answer|use_tools]]", model=rounds_model(rounds), tools=[lookup], journal=tmp_path,
        limits=UsageLimits(request_limit=rounds + 5, tool_calls_limit=rounds + 5),
    )
    assert result.status == "completed" and result.usage.tool_calls == rounds
    messages = len(result.messages)  # 2 per round, plus the prompt and the answer
    assert views.calls == rounds + 1  # one per request
    assert parts.calls <= 2 * messages  # each message's parts counted once (the response's twice, for the gauge)


async def test_the_run_keeps_a_long_answer_compactly_and_gives_back_every_event(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's log stores runs of text deltas as joined chunks (memory O(text), not an object per
    token) and makes the events again when read: the same events, in order, by index and by iteration."""
    from agentcell.engine import coalesce, start_run
    from agentcell.events import TokenDelta

    monkeypatch.setattr(coalesce, "INTERVAL", 0)  # a delta per loop turn: as many as the run gives
    run = start_run("Go [[answer]]", model=streaming_model(3_000), journal=False)
    followed = [e async for e in run.events()]
    await run
    events = run.events_so_far
    assert events == tuple(followed)
    deltas = [e for e in events if isinstance(e, TokenDelta)]
    assert "".join(d.text for d in deltas) == "".join(f"t{i} " for i in range(3_000))
    assert len(deltas) > 2 * eventlog.CHUNK  # nearly a delta per token (the timer fires every loop turn)
    assert {(d.slot, d.round) for d in deltas} == {("answer", 1)}
    log = run._log.events
    assert log[-1] == events[-1] and log[len(log) // 2] == events[len(events) // 2]
    stored = [item for item in log._items if not hasattr(item, "kind")]
    assert len(stored) == 1 and len(stored[0].chunks) == 2  # two joined chunks of 1,024, the rest pending


def test_a_long_journal_row_is_written_as_serialized_not_copied(tmp_path: Path) -> None:
    """A row that holds a long answer (the run's end holds it several times over) goes to the file as
    pieces, never as one copy of the answer: not concatenated into a line, nor joined into a batch, nor
    encoded whole (`rowjson.SLICE` characters at a time); the bytes those of the serializer."""
    from agentcell.events import SlotCompleted
    from agentcell.journal import rowjson
    from agentcell.journal.writer import event_adapter

    writes: list[bytes] = []

    class File:
        def write(self, data: bytes) -> int:
            writes.append(data)
            return len(data)

        def flush(self) -> None:
            pass

        def close(self) -> None:
            pass

    log = Journal(tmp_path / "run.jsonl", max_bytes=None)
    assert log._file is not None
    log._file.close()
    log._file = File()  # type: ignore[assignment]
    answer = "word " * 600_000
    event = SlotCompleted(run_id="r", slot="a", value=answer, text=answer)
    log.event(event)  # a boundary: written at once
    assert max(map(len, writes)) <= rowjson.SLICE
    assert b"".join(writes).split(b',"seg":1,', 1)[1] == b'"event":' + event_adapter().dump_json(event) + b"}\n"
    line = b"".join(writes)
    assert line.endswith(b"}\n") and json.loads(line)["event"]["value"] == answer
