"""Streamed text merged before it fans out (`engine/coalesce.py`): fewer events, the same text, the same order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell.engine import coalesce, start_run, streaming
from agentcell.engine.coalesce import ShownText, TextCoalescer
from agentcell.events import Event, SlotFailed, ThinkingDelta, TokenDelta

from .conftest import brief, slot, template

pytestmark = pytest.mark.anyio


def test_without_a_loop_each_piece_goes_out_at_once() -> None:
    out: list[Event] = []
    text = TextCoalescer("r", out.append)
    text.add(TokenDelta, "a", "x", 1)
    text.add(TokenDelta, "a", "y", 1)
    assert out == [TokenDelta(run_id="r", slot="a", text="x", round=1), TokenDelta(run_id="r", slot="a", text="y", round=1)]
    assert not text.pending


class FakeLoop:
    """The coalescer's clock and timers, moved only by the test (no wall time involved)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[tuple[float, Any]] = []

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Any) -> Any:
        loop = self

        class Handle:
            def cancel(self) -> None:
                loop.timers = [t for t in loop.timers if t[1] is not callback]

        self.timers.append((self.now + delay, callback))
        return Handle()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for due in [t for t in self.timers if t[0] <= self.now]:
            self.timers.remove(due)
            due[1]()


def _texts(out: list[Event]) -> list[str]:
    return [e.text for e in out]  # type: ignore[attr-defined]


def test_a_piece_after_an_idle_gap_goes_out_at_once() -> None:
    """Leading edge: the first token, and a token after a pause of at least `INTERVAL`, is emitted inside
    `add`, without waiting for a timer."""
    loop = FakeLoop()
    out: list[Event] = []
    text = TextCoalescer("r", out.append, loop=loop)
    text.add(TokenDelta, "s", "first", 1)
    assert _texts(out) == ["first"] and not text.pending and loop.timers == []
    loop.advance(coalesce.INTERVAL)  # idle for an interval
    text.add(TokenDelta, "s", " second", 1)
    assert _texts(out) == ["first", " second"] and not text.pending
    loop.advance(coalesce.INTERVAL * 10)
    text.add(TokenDelta, "s", " third", 1)
    assert _texts(out) == ["first", " second", " third"]


def test_a_burst_is_held_until_an_interval_after_the_last_delta() -> None:
    loop = FakeLoop()
    out: list[Event] = []
    text = TextCoalescer("r", out.append, loop=loop)
    text.add(TokenDelta, "s", "a", 1)  # at once
    loop.advance(coalesce.INTERVAL / 4)
    for piece in ("b", "c", "d"):
        text.add(TokenDelta, "s", piece, 1)  # too soon after "a": gathered
    assert _texts(out) == ["a"] and text.pending
    [(due, _)] = loop.timers
    assert due == pytest.approx(100.0 + coalesce.INTERVAL)  # an interval after "a", not after "b"
    loop.advance(coalesce.INTERVAL * 3 / 4)
    assert _texts(out) == ["a", "bcd"] and not text.pending


def test_a_fast_stream_makes_at_most_one_delta_per_interval() -> None:
    loop = FakeLoop()
    out: list[Event] = []
    text = TextCoalescer("r", out.append, loop=loop)
    for i in range(1000):  # 1,000 pieces over 0.1 s: 10,000 a second
        text.add(TokenDelta, "s", f"{i} ", 1)
        loop.advance(0.0001)
    loop.advance(coalesce.INTERVAL)
    assert "".join(_texts(out)) == "".join(f"{i} " for i in range(1000))
    assert len(out) <= 0.1 / coalesce.INTERVAL + 2


async def test_pieces_of_one_slot_round_and_kind_merge_until_the_timer_or_a_change() -> None:
    out: list[Event] = []
    text = TextCoalescer("r", out.append)
    for piece in ("a", "b", "c"):
        text.add(TokenDelta, "s", piece, 1)
    assert _texts(out) == ["a"] and text.pending  # the first at once, the rest held for at most `INTERVAL`
    text.add(TokenDelta, "s", "d", 2)  # another round: what was gathered goes out first
    text.add(ThinkingDelta, "s", "e", 2)  # another kind
    text.add(ThinkingDelta, "t", "f", 2)  # another slot
    assert [(type(e).__name__, e.slot, e.text, e.round) for e in out] == [  # type: ignore[union-attr]
        ("TokenDelta", "s", "a", 1),
        ("TokenDelta", "s", "bc", 1),
        ("TokenDelta", "s", "d", 2),
        ("ThinkingDelta", "s", "e", 2),
    ]
    await asyncio.sleep(coalesce.INTERVAL * 3)  # the timer emits the rest
    assert out[-1] == ThinkingDelta(run_id="r", slot="t", text="f", round=2) and not text.pending
    assert text.batches == 5


async def test_stop_while_text_is_held_keeps_it_before_the_ending(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Stop that lands while text waits in the coalescer: the text is emitted before the slot's end
    and kept as the partial answer (nothing shown is lost, nothing comes after the ending)."""
    monkeypatch.setattr(coalesce, "INTERVAL", 60.0)  # the timer never fires in this test
    yielded = asyncio.Event()

    async def fn(_messages: list[Any], _info: AgentInfo) -> Any:
        yield "Dr "
        yield "Smith"
        yielded.set()
        await asyncio.sleep(30)
        yield "never"

    run = start_run(template(slot("answer")), model=FunctionModel(stream_function=fn), journal=False)
    await yielded.wait()
    await asyncio.sleep(0.01)
    assert [e.text for e in run.events_so_far if isinstance(e, TokenDelta)] == ["Dr "]  # "Smith" is held
    run.cancel()
    result = await run
    assert [e.text for e in run.events_so_far if isinstance(e, TokenDelta)] == ["Dr ", "Smith"]
    assert brief(run.events_so_far)[-3:] == [
        ("token_delta", "answer", "Dr Smith"),
        ("slot_failed", "answer", "stopped"),
        ("processing_complete", "stopped", False),
    ]
    assert result.partial == {"answer": "Dr Smith"}
    failed = next(e for e in run.events_so_far if isinstance(e, SlotFailed))
    assert failed.partial == "Dr Smith"
    assert run.transcript.partial == {"answer": "Dr Smith"}


async def test_shown_text_keeps_the_merged_strings_not_a_copy() -> None:
    """`ShownText` swaps the pieces it holds for the coalescer's merged string: the very object the
    run's stores keep, so a long answer is not held once more by the slot's stream."""
    out: list[Event] = []
    text = TextCoalescer("r", out.append)
    shown = ShownText()
    text.watch("s", lambda merged, _round, parts: shown.merged(merged, parts))
    pieces = [f"t{i} " for i in range(5)]
    for piece in pieces:
        shown.append(piece)
        text.add(TokenDelta, "s", piece, 1)
    text.flush()
    shown.append("tail")
    assert str(shown) == "t0 t1 t2 t3 t4 tail"
    assert shown._merged == ["t0 ", "t1 t2 t3 t4 "]  # the first piece went out at once, the rest merged
    assert [id(t) for t in shown._merged] == [id(e.text) for e in out]  # type: ignore[attr-defined]
    assert shown._tail == ["tail"]


def test_shown_text_ignores_merges_of_pieces_it_does_not_hold() -> None:
    """Pieces of another round, or text retracted meanwhile, are not replaced (compared by identity)."""
    shown = ShownText()
    a, b = "".join(["a", "b"]), "".join(["c", "d"])
    shown.append(a)
    shown.merged("x" * 2, ["ab"])  # equal text, not the same object: not ours
    shown.merged(a + b, [a, b])  # more pieces than held
    assert str(shown) == "ab" and shown._tail == [a] and shown._merged == []
    shown.merged(a, [a])
    assert shown._merged == [a] and shown._tail == [] and bool(shown)
    assert not ShownText()


async def test_a_slots_shown_text_is_the_emitted_deltas_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a run: what the slot's stream keeps as shown is the text objects the run emitted."""
    streams: list[streaming.SlotStream] = []
    original = streaming.SlotStream.__init__

    def init(self: streaming.SlotStream, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        streams.append(self)

    monkeypatch.setattr(streaming.SlotStream, "__init__", init)

    async def fn(_messages: list[Any], _info: AgentInfo) -> Any:
        for i in range(3000):
            yield f"t{i} "
            if i % 500 == 0:
                await asyncio.sleep(coalesce.INTERVAL * 1.5)  # several timed batches

    run = start_run(template(slot("answer")), model=FunctionModel(stream_function=fn), journal=False)
    emitted: list[str] = []
    run.listen(lambda e: emitted.append(e.text) if isinstance(e, TokenDelta) else None)
    result = await run
    [stream] = streams
    shown = stream._shown
    assert isinstance(shown, ShownText) and str(shown) == result.answer == "".join(f"t{i} " for i in range(3000))
    assert len(emitted) > 1 and shown._tail == []
    assert [id(t) for t in shown._merged] == [id(t) for t in emitted]
