"""What the engine does per tool round and per event on top of raw pydantic-ai, pinned by counts.

No test here measures time (speed lives in `bench/loop_overhead.py`). Each counts something that used
to grow with the run or repeat per reader: asyncio tasks made per round (a second toolset made
pydantic-ai gather toolsets in new tasks on every step), the capabilities a slot's run carries (one, with
tools: pydantic-ai copies the run context per capability per hook and passes every event through each),
conversions of one event to its wire form (the sink, the transcript and the widget each did their
own), and walks of a slot's rounds to find a tool call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.usage import UsageLimits

from agentcell.engine import complete_async, stream
from agentcell.events import json as wire
from agentcell.formats import long_strings
from agentcell.frontends.handle import launch
from agentcell.frontends.launch import LaunchSpec
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.options import RunOptions
from agentcell.template import compile_template
from agentcell.transcript import Transcript
from tests.tool_rounds import lookup, rounds_model

pytestmark = pytest.mark.anyio

ROUNDS = 60
LIMITS = UsageLimits(request_limit=1_000, tool_calls_limit=1_000)


class TaskCount:
    """Counts the tasks created on the running loop while installed."""

    def __init__(self) -> None:
        self.made = 0

    def factory(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
                **kwargs: Any) -> asyncio.Task[Any]:
        self.made += 1
        return asyncio.Task(coro, loop=loop, **kwargs)


async def _tasks_made(run: Any) -> int:
    loop = asyncio.get_running_loop()
    counter, previous = TaskCount(), loop.get_task_factory()
    loop.set_task_factory(counter.factory)  # type: ignore[arg-type]
    try:
        await run()
    finally:
        loop.set_task_factory(previous)
    return counter.made


async def test_a_tool_round_makes_one_task_more_than_raw_pydantic_ai() -> None:
    """The engine's only task per round beyond pydantic-ai's own is the tool call's isolation task
    (`tooltask.run_isolated`); a run toolset beside the agent's own made pydantic-ai spawn ~6 more."""

    async def raw() -> None:
        async def handler(_ctx: Any, events: Any) -> None:
            async for _ in events:
                pass

        await Agent(rounds_model(ROUNDS), tools=[lookup]).run("Go", usage_limits=LIMITS, event_stream_handler=handler)

    async def engine() -> None:
        result = await complete_async("Go [[answer|use_tools]]", model=rounds_model(ROUNDS), tools=[lookup],
                                      limits=LIMITS, journal=False)
        assert result.status == "completed", result.error

    raw_tasks, engine_tasks = await _tasks_made(raw), await _tasks_made(engine)
    assert raw_tasks >= ROUNDS  # the count sees pydantic-ai's own tasks
    assert engine_tasks <= raw_tasks + ROUNDS + 10, (raw_tasks, engine_tasks)


async def test_a_slot_run_carries_one_capability_and_one_toolset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request hooks ride on the run's model (`SlotModel`), the tool calls on the one capability that wraps the
    agent's toolsets (`agents._SlotTools`): no toolset beside the agent's own (pydantic-ai gathers two toolsets in
    new tasks on every step) and no capability passed per run."""
    from pydantic_ai.toolsets import FunctionToolset

    from agentcell.engine.agents import _SlotTools
    from agentcell.engine.slotmodel import SlotModel

    seen: list[tuple[int, list[type], type, bool]] = []
    original = Agent.run
    bare = len(Agent(rounds_model(0))._root_capability.capabilities)  # type: ignore[attr-defined]  # pydantic-ai's own

    async def run(self: Agent[Any, Any], *args: Any, **kwargs: Any) -> Any:
        own = list(self.toolsets)
        capabilities = self._root_capability.capabilities[bare:]  # type: ignore[attr-defined]
        assert not kwargs.get("toolsets"), "the slot's tools belong in the agent's own toolset"
        seen.append((len(kwargs.get("capabilities") or ()), [type(c) for c in capabilities], type(kwargs["model"]),
                     len(own) == 1 and isinstance(own[0], FunctionToolset)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(Agent, "run", run)
    result = await complete_async("Go [[answer|use_tools]]", model=rounds_model(3), tools=[lookup], journal=False)
    assert result.status == "completed", result.error
    assert seen == [(0, [_SlotTools], SlotModel, True)]


async def test_an_agent_whose_tools_need_approval_carries_no_second_capability(monkeypatch: pytest.MonkeyPatch) -> None:
    """pydantic-ai resolves deferred (approval) calls only through a capability's `handle_deferred_tool_calls`:
    the one capability that wraps the agent's toolsets does that too, so approvals add none."""
    from agentcell.tools import tool

    @tool(approve=True, name="lookup")
    async def guarded(q: str) -> str:
        """Look `q` up, with approval."""
        return f"result for {q}"

    counts: list[int] = []
    original = Agent.run
    bare = len(Agent(rounds_model(0))._root_capability.capabilities)  # type: ignore[attr-defined]

    async def run(self: Agent[Any, Any], *args: Any, **kwargs: Any) -> Any:
        counts.append(len(self._root_capability.capabilities) - bare)  # type: ignore[attr-defined]
        return await original(self, *args, **kwargs)

    async def approve(_request: Any) -> bool:
        return True

    monkeypatch.setattr(Agent, "run", run)
    events = [e async for e in stream("Go [[answer|use_tools]]", model=rounds_model(1), tools=[guarded],
                                      journal=False, approve=approve)]
    end = events[-1]
    assert end.kind == "processing_complete" and end.status == "completed", end
    assert counts == [1]
    kinds = [e.kind for e in events if e.kind.startswith(("approval", "tool"))]
    assert kinds == ["approval_requested", "approval_resolved", "tool_started", "tool_completed"]


async def test_a_tool_run_copies_the_run_context_no_more_than_raw_pydantic_ai_with_one_capability(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pydantic-ai's combined capability copies the run context for each capability on each hook it dispatches
    (`_ctx_for_active_cap`); the engine's one capability costs no more copies than any capability of a raw
    pydantic-ai agent that has one (a capability forwarding four hooks made ~185 calls a round)."""
    from pydantic_ai.capabilities import AbstractCapability, combined

    copies = _count_calls(monkeypatch, combined, "_ctx_for_active_cap", arity=None)

    class Idle(AbstractCapability[Any]):
        pass

    async def raw() -> None:
        async def handler(_ctx: Any, events: Any) -> None:
            async for _ in events:
                pass

        agent = Agent(rounds_model(3), tools=[lookup], capabilities=[Idle()])
        await agent.run("Go", usage_limits=LIMITS, event_stream_handler=handler)

    await raw()
    raw_copies = len(copies)
    copies.clear()
    result = await complete_async("Go [[answer|use_tools]]", model=rounds_model(3), tools=[lookup], limits=LIMITS,
                                  journal=False)
    assert result.status == "completed", result.error
    assert len(copies) <= raw_copies, (len(copies), raw_copies)


def _count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, *, arity: int | None = 1) -> list[Any]:
    """Patch `module.name` to record each call's argument(s) (a list, so the test reads how many)."""
    calls: list[Any] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0] if arity == 1 else (args, kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


async def test_each_event_is_converted_to_wire_once_on_the_widget_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sink's UTF-8 check, the run's transcript and the widget share one conversion per event."""
    conversions = _count_calls(monkeypatch, wire, "jsonable")
    monkeypatch.setattr(AgentWidget, "send", lambda self, content, buffers=None: None)
    monkeypatch.setenv("AGENTCELL_JOURNAL", "off")
    options = RunOptions(model=rounds_model(ROUNDS), tools=(lookup,), limits=LIMITS)
    handle = launch(LaunchSpec(template=compile_template("Go [[answer|use_tools]]"), options=options))
    result = await handle
    assert result.status == "completed", result.error
    events = len(handle.run.events_so_far)
    assert events >= 7 * ROUNDS  # tool, request, response, usage and context events every round
    # One call per event (the run's ending converts its answer apart), against ~12 per event before:
    # one per field, once for the transcript and once again for the widget.
    assert len(conversions) <= events + 2, (len(conversions), events)


async def test_no_value_is_walked_in_python_for_long_strings_when_there_is_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Each event's UTF-8 check serializes it in C; only its own long top-level strings are searched in
    place. A walk in Python over every value of every event (`long_strings.hollow`) cost ~280 calls a
    round, the journal's walk of every row for long strings (`rowjson._hollow`) ~2 M instructions a
    round; the run's end (its journal row, the exported transcript) is judged from its messages' fields."""
    from agentcell.journal import rowjson

    walks = _count_calls(monkeypatch, long_strings, "hollow")
    row_walks: list[Any] = []
    original = rowjson._hollow
    monkeypatch.setattr(rowjson, "_hollow", lambda data, cut, prefix: (row_walks.append(data), original(data, cut, prefix)))
    monkeypatch.setattr(AgentWidget, "send", lambda self, content, buffers=None: None)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path))
    options = RunOptions(model=rounds_model(ROUNDS), tools=(lookup,), limits=LIMITS)
    handle = launch(LaunchSpec(template=compile_template("Go [[answer|use_tools]]"), options=options))
    result = await handle
    assert result.status == "completed", result.error
    assert handle.widget is not None and handle.widget.final  # the exported transcript was made
    assert list(tmp_path.rglob("*.jsonl"))  # and the journal written
    assert walks == [] and row_walks == [], (len(walks), len(row_walks))


class CountingRounds(dict[int, Any]):
    """A slot's rounds that count every walk over them."""

    walks = 0

    def values(self) -> Any:
        CountingRounds.walks += 1
        return super().values()

    def __iter__(self) -> Any:
        CountingRounds.walks += 1
        return super().__iter__()

    def items(self) -> Any:
        CountingRounds.walks += 1
        return super().items()


def test_finding_a_tool_call_does_not_walk_the_slots_rounds() -> None:
    tr = Transcript()
    tr.apply({"kind": "run_started", "run_id": "r", "model": "m", "t": 0})
    tr.apply({"kind": "slot_started", "run_id": "r", "slot": "answer", "slot_type": "text", "index": 0, "t": 0})

    def tool_round(n: int) -> None:
        common = {"run_id": "r", "slot": "answer", "call_id": f"c{n}", "tool_name": "lookup", "round": n, "t": n}
        tr.apply({"kind": "tool_started", **common, "args": {"q": n}})
        tr.apply({"kind": "tool_completed", **common, "ok": True, "result": f"r{n}"})

    for n in range(1, 301):
        tool_round(n)
    slot = tr.slots["answer"]
    slot.rounds = CountingRounds(slot.rounds)
    CountingRounds.walks = 0
    for n in range(301, 401):
        tool_round(n)
    assert CountingRounds.walks == 0
    assert len(slot.rounds) == 400
    assert all(it["status"] == "ok" for r in dict.values(slot.rounds) for it in r.items)


async def _engine_objects_in_cycles(rows: int) -> list[str]:
    import gc

    from agentcell import map as run_map

    gc.collect()
    gc.disable()
    try:
        await run_map("SHOUT: {{ item }} [[answer]]", [f"w{i}" for i in range(rows)], model=rounds_model(0),
                      journal=False, concurrency=2)  # fmt: skip
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return sorted(type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("agentcell.engine"))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


async def test_a_finished_run_leaves_none_of_its_objects_in_reference_cycles() -> None:
    """Objects in cycles are freed only by the cycle collector, whose full passes walk the whole heap: a batch
    row left ~120 (the run's state and its sink, the coalescer, the slot's stream), and collecting them was a
    good part of the row's CPU. Counted with collection off: what a collection then finds unreachable. The
    batch's own shared pieces (its agents, their tool registry) are in cycles once per batch, not per row."""
    few, many = await _engine_objects_in_cycles(2), await _engine_objects_in_cycles(12)
    assert many == few
    assert "RunState" not in many and "Sink" not in many


def test_usage_json_is_every_field_of_usage_without_asdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's ending converts its usage several times; the dict is built field by field, so a field added
    to `Usage` must be added there too (this fails then), and `dataclasses.asdict` is not called."""
    import dataclasses

    from agentcell.usage import Usage

    usage = Usage(requests=3, tool_calls=2, input_tokens=40, output_tokens=7, cost=0.25)
    expected = dataclasses.asdict(usage)
    monkeypatch.setattr(dataclasses, "asdict", lambda *_a, **_k: pytest.fail("asdict called"))
    assert wire.usage_json(usage) == expected
    assert list(wire.usage_json(Usage())) == [f.name for f in dataclasses.fields(Usage)]
