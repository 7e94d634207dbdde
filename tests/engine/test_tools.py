"""Tools: schemas, deps, errors as strings, worker threads, the identical-call cache, timeouts."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass

import pytest
from pydantic_ai import RunContext, Tool

from agentcell.engine import complete_async, start_run, stream
from agentcell.errors import ToolDefinitionError
from agentcell.events import ToolCompleted
from agentcell.tools import ToolPolicy, policy_of, readonly, tool

from .conftest import Call, Final, Script, Sleep, Think, brief, conversation, slot, template

pytestmark = pytest.mark.anyio


def test_decorators_return_the_same_callable() -> None:
    def f(x: int) -> int:
        return x + 1

    assert readonly(f) is f
    assert tool(timeout=3)(f) is f
    assert f(1) == 2
    assert policy_of(f) == ToolPolicy(readonly=True, timeout=3)

    @tool
    def g() -> None: ...

    assert policy_of(g) == ToolPolicy()


async def test_raising_tool_becomes_an_error_string_and_the_run_goes_on() -> None:
    def lookup(code: str) -> str:
        """Look a module up by its code."""
        raise ValueError("db is down")

    script = Script([Call("lookup", {"code": "X1"}, id="c1")], ["Sorry, ", "the db is down."])
    tpl = template(slot("answer", prompt="Who leads X1?", use_tools=True))
    events = [e async for e in stream(tpl, model=script.model, tools=[lookup])]
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "answer"),
        ("tool_started", "lookup", {"code": "X1"}),
        ("tool_completed", "lookup", False, "ValueError: db is down", False),
        ("token_delta", "answer", "Sorry, the db is down."),
        ("slot_completed", "answer", "Sorry, the db is down."),
        ("processing_complete", "completed", False),
    ]
    assert script.tools_per_request == [["lookup"], ["lookup"]]
    assert conversation(script.requests[1].messages) == [
        [("user", "Who leads X1?")],
        [("call", "lookup", {"code": "X1"})],
        [("return", "lookup", "ValueError: db is down")],
    ]
    failed = next(e for e in events if isinstance(e, ToolCompleted))
    assert failed.error == "ValueError: db is down"


async def test_sync_tool_runs_in_a_thread_while_the_loop_ticks() -> None:
    """The tool blocks until a coroutine on the loop releases it: that can only happen if the loop keeps
    running while the tool runs (a tool run on the loop thread would wait out its 10 s and say so)."""
    released = threading.Event()
    seen: dict[str, object] = {}

    def slow() -> str:
        """Wait for the loop to say it is still running."""
        seen["thread"] = threading.current_thread()
        seen["outcome"] = "done" if released.wait(timeout=10) else "the loop never ran while the tool waited"
        return str(seen["outcome"])

    async def releaser() -> None:
        while "thread" not in seen:
            await asyncio.sleep(0.01)
        released.set()  # reached only because the loop ticks while the tool blocks its thread

    script = Script([Call("slow")], ["ok"])
    release_task = asyncio.create_task(releaser())
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[slow])
    await release_task
    assert result.answer == "ok"
    assert seen["thread"] is not threading.main_thread()
    assert seen["outcome"] == "done"


async def test_identical_calls_in_one_round_run_once() -> None:
    runs = 0

    async def search(q: str) -> str:
        """Search."""
        nonlocal runs
        runs += 1
        await asyncio.sleep(0.1)
        return f"found {q}"

    script = Script([Call("search", {"q": "a"}, id="c1"), Call("search", {"q": "a"}, id="c2")], ["ok"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[search])]
    done = [e for e in events if isinstance(e, ToolCompleted)]
    assert runs == 1
    assert sorted((e.call_id, e.was_cached, e.result) for e in done) == [
        ("c1", False, "found a"),
        ("c2", True, "found a"),
    ]
    assert conversation(script.requests[1].messages)[-1] == [
        ("return", "search", "found a"),
        ("return", "search", "found a"),
    ]


async def test_cache_lasts_one_slot_only() -> None:
    runs = 0

    @readonly
    def search(q: str) -> str:
        """Search."""
        nonlocal runs
        runs += 1
        return "r"

    script = Script(
        [Call("search", {"q": "a"})],
        [Call("search", {"q": "a"})],
        ["one"],
        [Call("search", {"q": "a"})],
        ["two"],
    )
    tpl = template(slot("a", use_tools=True), slot("b", use_tools=True))
    events = [e async for e in stream(tpl, model=script.model, tools=[search])]
    assert [(e.slot, e.was_cached) for e in events if isinstance(e, ToolCompleted)] == [
        ("a", False),
        ("a", True),
        ("b", False),
    ]
    assert runs == 2


@dataclass
class Deps:
    user: str


async def test_deps_reach_run_context_and_stay_out_of_the_schema() -> None:
    def whoami(ctx: RunContext[Deps], greeting: str) -> str:
        """Greet the asker."""
        return f"{greeting}, {ctx.deps.user}"

    seen_schema = {}

    def first(messages: object, info: object) -> list[object]:
        seen_schema.update(info.function_tools[0].parameters_json_schema)  # type: ignore[attr-defined]
        return [Call("whoami", {"greeting": "hi"})]

    script = Script(first, ["ok"])
    result = await complete_async(
        template(slot("answer", use_tools=True)),
        model=script.model,
        tools=[whoami],
        deps=Deps("ada"),
        deps_type=Deps,
    )
    assert result.answer == "ok"
    assert list(seen_schema["properties"]) == ["greeting"]
    assert conversation(script.requests[1].messages)[-1] == [("return", "whoami", "hi, ada")]


async def test_ill_typed_arguments_are_refused_before_the_call() -> None:
    runs = 0

    def square(n: int) -> int:
        """Square a number."""
        nonlocal runs
        runs += 1
        return n * n

    script = Script([Call("square", {"n": "lots"})], ["gave up"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[square])]
    assert runs == 0 and events[-1].result.answer == "gave up"
    [retry] = script.requests[1].messages[-1].parts
    assert (retry.tool_name, retry.outcome, retry.content[0]["type"]) == ("square", "retried", "int_parsing")
    [started, refused] = [e for e in events if e.kind in ("tool_started", "tool_completed")]
    assert started.args == {"n": "lots"}
    assert not refused.ok and refused.result.startswith('invalid arguments: {"error":[{"type":"int_parsing"')


async def test_timeout_becomes_an_error_string() -> None:
    outcome: list[str] = []

    @tool(timeout=0.1)
    async def stuck() -> str:
        """Never returns."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        outcome.append("returned")
        return "never"

    script = Script([Call("stuck")], ["ok"])
    async with asyncio.timeout(60):  # a hang guard, not a time limit under test
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          tools=[stuck])]
    # The timeout cancelled the tool (not waited out its 10 s sleep, not left it running).
    assert outcome == ["cancelled"]
    assert [e.result for e in events if isinstance(e, ToolCompleted)] == ["TimeoutError: stuck took longer than 0.1 s"]


async def test_calls_of_a_round_run_concurrently_unless_sequential() -> None:
    running = {"nap": 0, "careful": 0}
    peak = {"nap": 0, "careful": 0}

    async def take_a_nap(name: str) -> None:
        running[name] += 1
        peak[name] = max(peak[name], running[name])
        await asyncio.sleep(0.05)  # yields: a call started beside this one runs now (the loop's order, not time)
        running[name] -= 1

    async def nap(n: int) -> int:
        """Nap."""
        await take_a_nap("nap")
        return n

    @tool(sequential=True)
    async def careful(n: int) -> int:
        """Nap carefully."""
        await take_a_nap("careful")
        return n

    for fn in (nap, careful):
        script = Script([Call(fn.__name__, {"n": 1}), Call(fn.__name__, {"n": 2})], ["ok"])
        await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[fn])
    assert peak == {"nap": 2, "careful": 1}  # overlapped; one after the other


async def test_typed_slot_with_tools_emits_no_tokens_and_thinking_streams() -> None:
    def count() -> int:
        """Count things."""
        return 3

    script = Script([Think("let me count"), "narration", Call("count")], [Final({"n": 3})])
    tpl = template(slot("plan", "json", use_tools=True))
    events = [e async for e in stream(tpl, model=script.model, tools=[count])]
    assert brief(events) == [
        ("run_started",),
        ("slot_started", "plan"),
        ("thinking_delta", "plan", "let me count"),
        ("tool_started", "count", {}),
        ("tool_completed", "count", True, "3", False),
        ("slot_completed", "plan", {"n": 3}),
        ("processing_complete", "completed", False),
    ]
    assert script.requests[0].outputs == ["final_result"]


async def test_slot_without_use_tools_offers_none_and_tools_option_restricts() -> None:
    def a() -> str:
        """A."""
        return "a"

    def b() -> str:
        """B."""
        return "b"

    script = Script(["x"], ["y"])
    tpl = template(slot("one"), slot("two", use_tools=True, tools=("b",)))
    await complete_async(tpl, model=script.model, tools=[a, b])
    assert script.tools_per_request == [[], ["b"]]


async def test_bad_tools_are_refused_before_any_request() -> None:
    def a() -> None:
        """A."""

    @tool(name="a")
    def other() -> None:
        """Other."""

    with pytest.raises(ToolDefinitionError, match="two tools are named 'a'"):
        start_run(template(slot("x")), model=Script().model, tools=[a, other])


async def test_pydantic_ai_tool_objects_are_accepted() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    script = Script([Call("ping")], ["ok"])
    tools = [Tool(ping, metadata={"readonly": True})]
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=tools)]
    assert [e.result for e in events if isinstance(e, ToolCompleted)] == ["pong"]
    _ = Sleep
