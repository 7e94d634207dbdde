"""The widget's Python side: events become batched custom messages, never a growing trait."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from agentcell.engine.eventlog import EventLog
from agentcell.events import ProcessingComplete, RunStarted, SlotStarted, ThinkingDelta, TokenDelta, Usage
from agentcell.events.json import to_wire
from agentcell.frontends.widget import widget as widget_module
from agentcell.frontends.widget.protocol import wire_events
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.result import RunResult

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Captured(AgentWidget):
    """An AgentWidget whose custom messages are recorded instead of sent to a front end."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent: list[dict[str, Any]] = []

    def send(self, content: Any, buffers: Any = None) -> None:
        self.sent.append(content)


def test_to_wire_keeps_fields_and_kind() -> None:
    ev = TokenDelta(run_id="r1", slot="answer", text="Hi", round=2)
    assert to_wire(ev, t=0.12345) == {
        "run_id": "r1", "slot": "answer", "text": "Hi", "round": 2, "kind": "token_delta", "t": 0.123,
    }


def test_processing_complete_carries_answer_and_usage_not_the_result_object() -> None:
    result = RunResult(run_id="r1", status="stopped", answer=None, usage=Usage(requests=1),
                       partial={"answer": "Hal"})
    wire = to_wire(ProcessingComplete(run_id="r1", status="stopped", result=result), t=1.0)
    assert wire == {
        "kind": "processing_complete", "run_id": "r1", "slot": None, "status": "stopped",
        "early_termination": False, "answer": None,
        "usage": {"requests": 1, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost": None,
                  "estimated": False},
        "t": 1.0,
    }


def test_the_wire_merges_deltas_of_one_round_only() -> None:
    log = EventLog()
    for text, rnd in [("a", 1), ("b", 1), ("c", 2)]:
        log.append(TokenDelta(run_id="r", slot="s", text=text, round=rnd))
    log.append(ThinkingDelta(run_id="r", slot="s", text="x", round=2))
    log.append(ThinkingDelta(run_id="r", slot="s", text="y", round=2))
    assert [(e["kind"], e["text"]) for e in wire_events(log)] == [
        ("token_delta", "ab"), ("token_delta", "c"), ("thinking_delta", "xy")]


@dataclass
class _Timer:
    when: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class Clock:
    """The widget's `time.monotonic` and its loop's timers, moved only by the test (no wall time involved)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.timers: list[_Timer] = []

    def monotonic(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], None]) -> _Timer:
        timer = _Timer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Move time on, firing each timer that falls due on the way, at its time."""
        end = self.now + seconds
        while due := sorted((t for t in self.timers if not t.cancelled and t.when <= end), key=lambda t: t.when):
            timer = due[0]
            self.timers.remove(timer)
            self.now = max(self.now, timer.when)
            timer.callback()
        self.now = end


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(widget_module, "time", SimpleNamespace(monotonic=fake.monotonic))
    return fake


def test_many_deltas_become_few_messages_and_final_trait_set_once(clock: Clock) -> None:
    w = Captured(flush_interval=0.05)
    w.bind(loop=clock, on_stop=lambda: None)  # type: ignore[arg-type]
    w.apply(RunStarted(run_id="r", model="offline", offline=True))
    w.apply(SlotStarted(run_id="r", slot="answer", slot_type="text", index=0))
    for i in range(2000):  # 2000 deltas over 2 s of the run's clock
        w.apply(TokenDelta(run_id="r", slot="answer", text=f"{i} "))
        clock.advance(0.001)
    clock.advance(0.1)
    assert w.final == []
    timed = len(w.sent)
    result = RunResult(run_id="r", status="completed", answer="…")
    w.apply(ProcessingComplete(run_id="r", status="completed", result=result))
    text = "".join(e["text"] for m in w.sent for e in m["events"] if e["kind"] == "token_delta")
    assert text == "".join(f"{i} " for i in range(2000))
    # One message per 50 ms of the run at most, sent by the timer: 2 s → about 40, not 2000;
    # consecutive messages are at least the flush interval apart on the run's clock.
    assert 35 <= timed <= 2.0 / 0.05 + 2
    sent_at = [m["t"] for m in w.sent[:timed]]
    assert min(b - a for a, b in itertools.pairwise(sent_at)) >= 0.05 - 1e-9
    assert w.sent[-1]["events"][-1]["kind"] == "processing_complete"  # the end is sent at once
    assert w.status == "completed"
    assert [e["kind"] for e in w.final] == ["run_started", "slot_started", "token_delta", "processing_complete"]


def test_deltas_at_one_instant_become_one_message(clock: Clock) -> None:
    w = Captured(flush_interval=0.05)
    w.bind(loop=clock, on_stop=lambda: None)  # type: ignore[arg-type]
    for i in range(2000):
        w.apply(TokenDelta(run_id="r", slot="answer", text=f"{i} "))
    assert w.sent == []  # nothing is sent from inside `apply`: the timer sends
    clock.advance(0.05)
    assert len(w.sent) == 1 and len(w.sent[0]["events"]) == 1  # merged into one delta


async def test_snapshot_request_replays_everything_so_far() -> None:
    w = Captured(flush_interval=10)
    w.bind(loop=asyncio.get_running_loop(), on_stop=lambda: None)
    w.apply(RunStarted(run_id="r", model="offline"))
    w.apply(TokenDelta(run_id="r", slot="answer", text="Hel"))
    w.apply(TokenDelta(run_id="r", slot="answer", text="lo"))
    w._on_frontend_msg(w, {"kind": "snapshot_request"}, [])
    snap = w.sent[-1]
    assert snap["kind"] == "snapshot"
    assert [(e["kind"], e.get("text")) for e in snap["events"]] == [("run_started", None), ("token_delta", "Hello")]


async def test_stop_message_calls_the_stop_callback_directly() -> None:
    calls: list[str] = []
    w = Captured()
    w.bind(loop=asyncio.get_running_loop(), on_stop=lambda: calls.append("stop"))
    w._on_frontend_msg(w, {"kind": "stop"}, [])
    assert calls == ["stop"]


def test_a_snapshot_is_not_changed_by_later_events() -> None:
    log = EventLog()
    for text in ("a", "b"):
        log.append(TokenDelta(run_id="r", slot="s", text=text))
    first = wire_events(log)
    log.append(TokenDelta(run_id="r", slot="s", text="c"))
    log.append(ThinkingDelta(run_id="r", slot="s", text="x", round=2))
    assert [e["text"] for e in first] == ["ab"]
    assert [e["text"] for e in wire_events(log)] == ["abc", "x"]
    assert [e["text"] for e in wire_events(log, 2)] == ["c", "x"]  # from a cursor inside the run of deltas


async def _long_answer_events() -> tuple[list[Any], str]:
    from pydantic_ai.models.function import FunctionModel

    from agentcell import stream

    words = [f"word{i} " for i in range(600)]

    async def fn(messages: list[Any], info: Any) -> Any:
        for w in words:
            yield w

    events = [ev async for ev in stream("Say it. [[answer]]", model=FunctionModel(stream_function=fn))]
    return events, "".join(words)


async def test_the_runs_last_batch_and_a_snapshot_carry_a_long_answer_once() -> None:
    from agentcell.frontends.widget.shared_texts import unpack

    events, answer = await _long_answer_events()
    w = Captured(flush_interval=10)
    w.bind(loop=asyncio.get_running_loop(), on_stop=lambda: None)
    for ev in events:
        w.apply(ev)
    last = w.sent[-1]
    assert last["kind"] == "events"
    kinds = [e.get("kind") for e in last["events"]]
    assert kinds[0] == "shared_texts" and "slot_completed" in kinds and kinds[-1] == "processing_complete"
    plain = unpack(last["events"])
    done = plain[-1]
    assert done["answer"] == answer and next(e for e in plain if e["kind"] == "slot_completed")["value"] == answer
    assert json.dumps(last).count(answer) == 1  # unpacked: three times (the merged stream, value and answer)
    w._on_frontend_msg(w, {"kind": "snapshot_request"}, [])
    snap = w.sent[-1]
    assert snap["kind"] == "snapshot" and json.dumps(snap).count(answer) == 1
    assert unpack(snap["events"]) == w.wire_snapshot()


def test_a_lone_token_after_a_quiet_interval_is_sent_at_the_next_turn_not_after_the_interval(clock: Clock) -> None:
    """Leading edge: after a quiet `flush_interval` a token goes out at the loop's next turn (a timer of 0 s);
    only tokens that follow it within the interval wait, for what is left of the interval."""
    w = Captured(flush_interval=0.04)
    w.bind(loop=clock, on_stop=lambda: None)  # type: ignore[arg-type]
    w.apply(TokenDelta(run_id="r", slot="answer", text="first"))
    assert [t.when - clock.now for t in clock.timers if not t.cancelled] == [0.0]
    clock.advance(0)
    assert [e["text"] for e in w.sent[-1]["events"]] == ["first"]
    clock.advance(0.01)
    w.apply(TokenDelta(run_id="r", slot="answer", text=" burst"))  # 10 ms after a batch: waits 30 ms
    clock.advance(0.029)
    assert len(w.sent) == 1
    clock.advance(0.001)
    assert len(w.sent) == 2 and w.sent[-1]["events"][0]["text"] == " burst"
    clock.advance(1.0)  # quiet again
    w.apply(TokenDelta(run_id="r", slot="answer", text=" lone"))
    clock.advance(0)
    assert len(w.sent) == 3 and w.sent[-1]["events"][0]["text"] == " lone"


async def test_a_launched_runs_widget_reads_the_runs_own_log() -> None:
    """One log per run: the widget keeps no copy of the events, it reads the engine's log with a cursor."""
    from pydantic_ai.models.function import FunctionModel

    from agentcell.frontends import handle as handle_module
    from agentcell.frontends.launch import LaunchSpec
    from agentcell.options import RunOptions
    from agentcell.template import compile_template

    async def fn(messages: list[Any], info: Any) -> Any:
        for word in ("one ", "two ", "three"):
            yield word

    sent: list[dict[str, Any]] = []
    options = RunOptions(model=FunctionModel(stream_function=fn), journal=False)
    handle = handle_module.launch(LaunchSpec(template=compile_template("Go [[answer]]"), options=options))
    assert handle.widget is not None
    handle.widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    await handle
    assert handle.widget._log is handle.run.log
    assert not hasattr(handle.widget, "events_log") and not hasattr(handle.widget, "_pending")
    streamed = "".join(e["text"] for m in sent for e in m["events"] if e["kind"] == "token_delta")
    assert streamed == "one two three"
    assert [e["kind"] for e in handle.widget.final][-1] == "processing_complete"
