"""Runs started from one prepared setup share one pydantic-ai `Agent` per slot shape; each run's own state
stays its own (`engine/agents.py`).

Building an `Agent` per slot per run cost ~0.5 ms of CPU per batch row (`bench/batch_instructions.py`).
Now a batch prepares its template once (`engine.prepare`) and its rows share the agents; a run's
capability, output check, instructions, model and output type travel with the run. These tests count
agents built and check that concurrent runs sharing one agent keep their events, checks and answers apart.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from agentcell.batch import map as agent_map
from agentcell.engine import complete_async, prepare
from agentcell.options import RunOptions
from agentcell.template import compile_template
from tests.tool_rounds import lookup, rounds_model

pytestmark = pytest.mark.anyio


def _count_agents(monkeypatch: pytest.MonkeyPatch) -> list[Agent[Any, Any]]:
    made: list[Agent[Any, Any]] = []
    original = Agent.__init__

    def init(self: Agent[Any, Any], *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Agent, "__init__", init)
    return made


def _echo(delay: float = 0.0) -> FunctionModel:
    """Answers `WORD!` for a prompt ending in `say WORD`, after `delay` seconds (so runs overlap)."""

    async def fn(messages: list[Any], _info: AgentInfo) -> Any:
        await asyncio.sleep(delay)
        prompt = messages[-1].parts[-1].content
        yield re.findall(r"say (\S+)", prompt)[-1] + "!"

    return FunctionModel(stream_function=fn)


async def test_a_batch_of_a_hundred_rows_with_tools_builds_one_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count_agents(monkeypatch)
    result = await agent_map("Go {{ item }} [[answer|use_tools]]", [str(i) for i in range(100)],
                             model=rounds_model(1), tools=[lookup], concurrency=8, journal=False)
    assert [r.status for r in result.rows] == ["completed"] * 100
    assert len(made) == 1


async def test_separate_runs_build_their_own_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache outlives a run: two `complete` calls (two cells) each build theirs, so nothing a run built
    (its tools, its model) is kept after it ends."""
    made = _count_agents(monkeypatch)
    for _ in range(2):
        result = await complete_async("Go [[answer|use_tools]]", model=rounds_model(1), tools=[lookup], journal=False)
        assert result.status == "completed", result.error
    assert len(made) == 2


async def test_a_resumed_run_reuses_its_first_segments_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _count_agents(monkeypatch)
    asked, gate = asyncio.Event(), asyncio.Event()

    async def fn(messages: list[Any], _info: AgentInfo) -> Any:
        asked.set()
        await gate.wait()
        yield "fine"

    run = prepare("Go [[answer]]", RunOptions(model=FunctionModel(stream_function=fn), journal=False)).start()
    await asyncio.wait_for(asked.wait(), 10)
    run.cancel()
    assert (await run).status == "stopped"
    gate.set()
    resumed = await run.resume()
    assert resumed.status == "completed", resumed.error
    assert len(made) == 1


async def test_concurrent_runs_sharing_an_agent_keep_their_own_events_and_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = _count_agents(monkeypatch)
    prepared = prepare(compile_template("Please say {{ word }} [[answer]]"),
                       RunOptions(model=_echo(delay=0.01), journal=False))
    runs = [prepared.start(context={"word": f"w{i}"}) for i in range(20)]
    results = await asyncio.gather(*(run.wait() for run in runs))
    assert len(made) == 1
    for i, (run, result) in enumerate(zip(runs, results, strict=True)):
        assert result.results["answer"] == f"w{i}!"
        tokens = "".join(getattr(e, "text", "") for e in run.events_so_far if e.kind == "token_delta")
        assert tokens == f"w{i}!"
        assert {e.run_id for e in run.events_so_far} == {run.run_id}
        sent = [e for e in run.events_so_far if e.kind == "request_completed"]
        assert len(sent) == 1


async def test_a_shared_agent_applies_each_runs_own_output_check() -> None:
    """Free text with a constraint: each run's check is its own (here `max_length=` from the row)."""
    prepared = prepare("Please say {{ w }} [[answer|max_length={{ most }}, retries=0]]",
                       RunOptions(model=_echo(), journal=False))
    short, fine = prepared.start(context={"w": "toolongword", "most": 3}), prepared.start(context={"w": "ok", "most": 3})
    loose = prepared.start(context={"w": "toolongword", "most": 50})
    short_result, fine_result, loose_result = await asyncio.gather(short.wait(), fine.wait(), loose.wait())
    assert fine_result.status == "completed" and fine_result.results["answer"] == "ok!"
    assert loose_result.status == "completed" and loose_result.results["answer"] == "toolongword!"
    assert short_result.status == "failed"


async def test_typed_and_text_slots_answer_in_their_own_types() -> None:
    async def fn(messages: list[Any], info: AgentInfo) -> Any:
        if info.output_tools:
            yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args='{"response": 7}')}
        else:
            yield "seven"

    prepared = prepare("How many? [[int:n]] And in words? [[words]]",
                       RunOptions(model=FunctionModel(stream_function=fn), journal=False))
    first, second = await asyncio.gather(prepared.start().wait(), prepared.start().wait())
    for result in (first, second):
        assert result.status == "completed", result.error
        assert (result.results["n"], result.results["words"]) == (7, "seven")


async def test_a_shared_agent_with_tools_outside_its_run_says_why_it_cannot_run() -> None:
    """The shared toolset finds the run's tool calls in its binding; a run without one is a bug in the engine
    and says so (it never calls a tool without the run's events, guards and budget)."""
    from pydantic_ai import Tool

    from agentcell.engine.agents import SlotAgents

    agent = SlotAgents().agent_for(tools=(Tool(lookup),), deps_type=type(None), name="x", retries=1, answers="text")
    with pytest.raises(RuntimeError, match="without its per-run binding"):
        await agent.run("hi", model=rounds_model(1))


async def test_a_shared_agent_carries_one_capability_only_when_it_has_tools() -> None:
    """The one capability wraps the agent's toolsets and resolves its approvals; a text slot's agent carries none
    (every capability costs a run-context copy per hook pydantic-ai dispatches)."""
    from pydantic_ai import Tool
    from pydantic_ai.toolsets import FunctionToolset

    from agentcell.engine.agents import SlotAgents

    agents = SlotAgents()
    bare = len(Agent(rounds_model(0))._root_capability.capabilities)  # type: ignore[attr-defined]
    text = agents.agent_for(tools=(), deps_type=type(None), name="x", retries=1, answers="text")
    plain = agents.agent_for(tools=(Tool(lookup),), deps_type=type(None), name="x", retries=1, answers="text")
    needing = Tool(lookup, requires_approval=True)
    gated = agents.agent_for(tools=(needing,), deps_type=type(None), name="x", retries=1, answers="text")
    foreign = agents.agent_for(
        tools=(), toolsets=(FunctionToolset([lookup]),), deps_type=type(None), name="x", retries=1, answers="text"
    )
    added = [len(a._root_capability.capabilities) - bare for a in (text, plain, gated, foreign)]  # type: ignore[attr-defined]
    assert added == [0, 1, 1, 1]
