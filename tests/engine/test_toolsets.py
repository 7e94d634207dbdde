"""The run's `toolsets=`: any pydantic-ai toolset joins a run, and its calls are the engine's like any other.

A plain `FunctionToolset` the user built and an `AbstractToolset` of their own are offered beside the run's
`tools`; their calls are shown (tool events), share the identical-call cache, are timed out by the engine
(an error string the model reads, not pydantic-ai's retry) and wait for approval when their definition or
`approve_writes` asks for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import RunContext, Tool
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ApprovalRequiredToolset, FunctionToolset
from pydantic_ai.toolsets.abstract import ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from agentcell.engine import ApprovalDecision, complete_async, start_run, stream
from agentcell.errors import RunError, ToolDefinitionError
from agentcell.events import ApprovalRequested, ToolCompleted

from .conftest import Call, Script, brief, conversation, slot, template

pytestmark = pytest.mark.anyio


class Shelf(AbstractToolset[Any]):
    """A toolset of the user's own: one `shelf_count` tool, answered without any pydantic-ai `Tool`."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    @property
    def id(self) -> str | None:
        return "shelf"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        schema = {"type": "object", "properties": {"shelf": {"type": "string"}}, "required": ["shelf"]}
        tool_def = ToolDefinition(name="shelf_count", description="Count the books on a shelf.",
                                  parameters_json_schema=schema)
        validator = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
        return {"shelf_count": ToolsetTool(toolset=self, tool_def=tool_def, max_retries=1, args_validator=validator)}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        self.calls.append(tool_args)
        return f"{len(tool_args['shelf'])} books"


def tool_events(events: list[Any]) -> list[tuple[Any, ...]]:
    return [b for b in brief(events) if b[0].startswith(("tool_", "approval_"))]


async def test_a_function_toolset_the_user_built_joins_the_run_beside_its_tools() -> None:
    def local(x: str) -> str:
        """A tool of the run's own."""
        return f"local {x}"

    def remote(x: str) -> str:
        """A tool of the user's toolset."""
        return f"remote {x}"

    script = Script([Call("remote", {"x": "a"}, id="r1")], [Call("local", {"x": "b"}, id="l1")], ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, tools=[local],
                                      toolsets=[FunctionToolset([remote])])]
    assert events[-1].status == "completed", events[-1]
    assert script.tools_per_request[0] == ["local", "remote"]
    assert tool_events(events) == [
        ("tool_started", "remote", {"x": "a"}),
        ("tool_completed", "remote", True, "remote a", False),
        ("tool_started", "local", {"x": "b"}),
        ("tool_completed", "local", True, "local b", False),
    ]
    assert conversation(script.requests[1].messages)[-1] == [("return", "remote", "remote a")]


async def test_a_toolset_of_the_users_own_joins_the_run_and_its_calls_are_shown() -> None:
    shelf = Shelf()
    script = Script([Call("shelf_count", {"shelf": "abc"}, id="s1")], ["three"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, toolsets=[shelf])]
    assert events[-1].status == "completed", events[-1]
    assert script.tools_per_request == [["shelf_count"], ["shelf_count"]]
    assert tool_events(events) == [
        ("tool_started", "shelf_count", {"shelf": "abc"}),
        ("tool_completed", "shelf_count", True, "3 books", False),
    ]
    assert shelf.calls == [{"shelf": "abc"}]


async def test_a_slot_without_use_tools_offers_no_toolset_and_tools_restricts_them_too() -> None:
    def other(x: str) -> str:
        """Another tool of the toolset."""
        return x

    script = Script(["plain"], [Call("shelf_count", {"shelf": "a"})], ["ok"])
    toolset = FunctionToolset([other])
    tpl = template(slot("a"), slot("b", use_tools=True, tools=["shelf_count"]))
    result = await complete_async(tpl, model=script.model, toolsets=[Shelf(), toolset])
    assert result.status == "completed", result.error
    assert script.tools_per_request == [[], ["shelf_count"], ["shelf_count"]]


async def test_identical_calls_of_a_toolsets_tool_hit_the_cache() -> None:
    shelf = Shelf()
    script = Script([Call("shelf_count", {"shelf": "ab"}, id="c1"), Call("shelf_count", {"shelf": "ab"}, id="c2")],
                    ["ok"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model, toolsets=[shelf])]
    done = sorted((e.call_id, e.was_cached, e.result) for e in events if isinstance(e, ToolCompleted))
    assert done == [("c1", False, "2 books"), ("c2", True, "2 books")]
    assert shelf.calls == [{"shelf": "ab"}]


async def test_a_toolsets_tool_is_timed_out_by_the_engine() -> None:
    """A per-tool timeout on a toolset's tool is the engine's: the call is cancelled and the model reads a
    `TimeoutError` string (pydantic-ai's own would have sent a retry prompt instead)."""
    outcome: list[str] = []

    async def stuck() -> str:
        """Never returns."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return "never"

    class Watched(FunctionToolset[Any]):
        """Records the timeout pydantic-ai's toolset would enforce itself (as a retry prompt)."""

        async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                            tool: ToolsetTool[Any]) -> Any:
            left_to_pydantic_ai.append(tool.tool_def.timeout)
            return await super().call_tool(name, tool_args, ctx, tool)

    left_to_pydantic_ai: list[float | None] = []
    script = Script([Call("stuck")], ["ok"])
    async with asyncio.timeout(60):  # a hang guard, not a time limit under test
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[Watched([Tool(stuck, timeout=0.1)])])]
    assert left_to_pydantic_ai == [None]  # the engine's timeout, not raced by pydantic-ai's
    assert outcome == ["cancelled"]
    assert [e.result for e in events if isinstance(e, ToolCompleted)] == ["TimeoutError: stuck took longer than 0.1 s"]
    assert conversation(script.requests[1].messages)[-1] == [
        ("return", "stuck", "TimeoutError: stuck took longer than 0.1 s")
    ]


def _delete(ran: list[str]) -> Any:
    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    return delete_file


async def test_a_toolsets_tool_that_requires_approval_asks_first() -> None:
    ran: list[str] = []
    asked: list[ApprovalRequested] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request)
        return True

    toolset = FunctionToolset([Tool(_delete(ran), requires_approval=True)])
    script = Script([Call("delete_file", {"path": "a.txt"}, id="d1")], ["done"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                      toolsets=[toolset], approve=approve)]
    assert tool_events(events) == [
        ("approval_requested", "delete_file", {"path": "a.txt"}),
        ("approval_resolved", True, None),
        ("tool_started", "delete_file", {"path": "a.txt"}),
        ("tool_completed", "delete_file", True, "deleted a.txt", False),
    ]
    assert ran == ["a.txt"] and asked[0].call_id == "d1"


async def test_a_denied_toolset_call_never_runs_and_the_model_reads_why() -> None:
    ran: list[str] = []

    async def deny(request: ApprovalRequested) -> ApprovalDecision:
        return ApprovalDecision(approved=False, reason="not that file")

    toolset = ApprovalRequiredToolset(FunctionToolset([_delete(ran)]))  # pydantic-ai's own way to ask
    script = Script([Call("delete_file", {"path": "a.txt"})], ["ok, I won't"])
    events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                      toolsets=[toolset], approve=deny)]
    assert ran == []
    denial = "The user denied the call to delete_file: not that file"
    # The toolset asks from inside its call, so the call was shown first; the denial ends it (never left running).
    assert tool_events(events) == [
        ("tool_started", "delete_file", {"path": "a.txt"}),
        ("approval_requested", "delete_file", {"path": "a.txt"}),
        ("approval_resolved", False, "not that file"),
        ("tool_completed", "delete_file", False, denial, False),
    ]
    assert conversation(script.requests[1].messages)[-1] == [("return", "delete_file", denial)]


async def test_a_call_its_toolset_defers_from_inside_runs_once_approved() -> None:
    ran: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        return True

    toolset = ApprovalRequiredToolset(FunctionToolset([_delete(ran)]))
    script = Script([Call("delete_file", {"path": "a.txt"}, id="d1")], ["done"])
    run = start_run(template(slot("answer", use_tools=True, max_calls=1)), model=script.model, toolsets=[toolset],
                    approve=approve, journal=False)
    result = await run.wait()
    assert result.status == "completed", result.error
    assert ran == ["a.txt"]
    rounds = run.transcript.slots["answer"].rounds.values()
    [call] = [item for r in rounds for item in r.items if item["type"] == "tool"]  # shown once, ended ok
    assert (call["call_id"], call["status"], call["result"]) == ("d1", "ok", "deleted a.txt")  # counted once: max_calls=1


async def test_approve_writes_asks_for_a_toolsets_tools_unless_marked_readonly() -> None:
    def read(path: str) -> str:
        """Read."""
        return "text"

    def write(path: str) -> str:
        """Write."""
        return "written"

    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return True

    toolset = FunctionToolset([Tool(read, metadata={"readonly": True}), write])
    script = Script([Call("read", {"path": "a"}), Call("write", {"path": "a"})], ["ok"])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, toolsets=[toolset],
                                  approve=approve, approve_writes=True)
    assert result.status == "completed", result.error
    assert asked == ["write"]
    assert sorted(conversation(script.requests[1].messages)[-1]) == [("return", "read", "text"),
                                                                     ("return", "write", "written")]


@pytest.mark.parametrize("given", [["nope"], [print], FunctionToolset([])], ids=["str", "function", "bare toolset"])
async def test_what_is_not_a_list_of_toolsets_is_refused_before_any_request(given: Any) -> None:
    script = Script(["never"])
    with pytest.raises(ToolDefinitionError, match=r"^toolsets= takes "):
        await complete_async(template(slot("answer", use_tools=True)), model=script.model, toolsets=given)
    assert script.requests == []


async def test_a_toolsets_tool_named_like_one_of_tools_fails_the_slot_naming_both() -> None:
    def lookup(q: str) -> str:
        """Look up."""
        return q

    script = Script([Call("lookup", {"q": "a"})], ["ok"])
    with pytest.raises(RunError, match=r"conflicts with existing tool .* 'lookup'"):
        await complete_async(template(slot("answer", use_tools=True)), model=script.model, tools=[lookup],
                             toolsets=[FunctionToolset([lookup])])


async def test_a_repeated_round_of_a_toolsets_tool_gets_the_nudge_and_then_no_tools() -> None:
    """Loop detection counts a toolset's calls as it counts the run's own tools'."""
    from agentcell.engine.calls import NUDGE

    def same(messages: object, info: Any) -> list[object]:
        return [Call("shelf_count", {"shelf": "a"})] if info.function_tools else ["ok"]

    script = Script(same, repeat_last=True)
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, toolsets=[Shelf()])
    assert result.answer == "ok"
    assert script.tools_per_request == [["shelf_count"], ["shelf_count"], ["shelf_count"], []]
    assert [conversation(r.messages)[-1] for r in script.requests[1:]] == [
        [("return", "shelf_count", "1 books")],
        [("return", "shelf_count", f"1 books\n\n{NUDGE}")],
        [("return", "shelf_count", f"1 books\n\n{NUDGE}")],
    ]


async def test_identical_calls_a_toolset_defers_from_inside_are_each_approved_and_run_once() -> None:
    ran: list[str] = []
    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.call_id)
        return True

    toolset = ApprovalRequiredToolset(FunctionToolset([_delete(ran)]))
    script = Script([Call("delete_file", {"path": "a"}, id="d1"), Call("delete_file", {"path": "a"}, id="d2")],
                    ["done"])
    result = await complete_async(template(slot("answer", use_tools=True)), model=script.model, toolsets=[toolset],
                                  approve=approve)
    assert result.status == "completed", result.error
    assert sorted(asked) == ["d1", "d2"] and ran == ["a"]
    assert conversation(script.requests[1].messages)[-1] == [("return", "delete_file", "deleted a")] * 2


async def test_an_external_tool_is_not_offered_and_the_run_says_why() -> None:
    """An external tool's calls go back to whoever runs the agent; a slot cannot answer them, so it is left out
    with a warning (pydantic-ai's own error would tell the user to change the agent's output types)."""
    from pydantic_ai.toolsets import ExternalToolset

    script = Script(["ok"])
    run = start_run(template(slot("answer", use_tools=True)), model=script.model, journal=False,
                    toolsets=[ExternalToolset([ToolDefinition(name="ext", description="External.")]), Shelf()])
    result = await run.wait()
    assert result.status == "completed", result.error
    assert script.tools_per_request == [["shelf_count"]]
    [warning] = [e.message for e in run.events_so_far if e.kind == "run_warning"]
    assert warning.startswith("the toolset tool 'ext' is external")
