"""Slots inside `{% if %}`/`{% for %}`, `<together>`, `<header>`, re-used names and includes, run end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from agentcell.engine import complete_async, start, stream
from agentcell.options import RunOptions
from agentcell.template import compile_template

from .conftest import Final, Script, brief, conversation

pytestmark = pytest.mark.anyio


async def test_a_slot_under_if_runs_only_when_its_branch_holds() -> None:
    source = (
        "Is this urgent? [[!bool:urgent]]\n"
        "{% if urgent %}Who must act today? [[owner]]{% else %}Why can it wait? [[reason]]{% endif %}\n"
        "Write the reply. [[reply]]"
    )
    script = Script([Final(True)], ["Bob"], ["Dear all"])
    events = [e async for e in stream(source, model=script.model, journal=False)]
    assert brief(events)[1:] == [
        ("slot_started", "urgent"),
        ("slot_completed", "urgent", True),
        ("slot_completed", "reason", None),
        ("slot_started", "owner"),
        ("token_delta", "owner", "Bob"),
        ("slot_completed", "owner", "Bob"),
        ("slot_started", "reply"),
        ("token_delta", "reply", "Dear all"),
        ("slot_completed", "reply", "Dear all"),
        ("processing_complete", "completed", False),
    ]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.results == {"urgent": True, "reason": None, "owner": "Bob", "reply": "Dear all"}
    assert conversation(script.requests[2].messages) == [
        [("user", "Is this urgent?")],
        [("assistant", "true")],
        [("user", "Who must act today?")],
        [("assistant", "Bob")],
        [("user", "Write the reply.")],
    ]


async def test_elif_with_a_string_test_and_text_carried_into_the_next_slot() -> None:
    source = (
        "Intro. {% if tone == 'formal' %}Be formal. [[a]]{% elif tone == 'warm' %}Be warm.{% else %}[[c]]{% endif %}\n"
        "Now write. [[b]]"
    )
    script = Script(["fine"])
    result = await complete_async(source, context={"tone": "warm"}, model=script.model, journal=False)
    assert result.results == {"a": None, "c": None, "b": "fine"}
    assert conversation(script.requests[0].messages) == [[("user", "Intro.\nBe warm.\nNow write.")]]


async def test_a_slot_in_a_for_loop_runs_once_per_item_and_its_value_is_the_list() -> None:
    source = (
        "{% for item in items %}Summarise {{ item }} ({{ loop.index }} of {{ loop.length }}). [[summary]]{% endfor %}\n"
        "Compare: {{ summary | join('; ') }} [[verdict]]"
    )
    script = Script(["S1"], ["S2"], ["same"])
    events = [e async for e in stream(source, context={"items": ["a", "b"]}, model=script.model, journal=False)]
    assert [e for e in brief(events) if e[0] in ("slot_started", "slot_completed")] == [
        ("slot_started", "summary[0]"),
        ("slot_completed", "summary[0]", "S1"),
        ("slot_started", "summary[1]"),
        ("slot_completed", "summary[1]", "S2"),
        ("slot_completed", "summary", ["S1", "S2"]),
        ("slot_started", "verdict"),
        ("slot_completed", "verdict", "same"),
    ]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.results == {"summary": ["S1", "S2"], "verdict": "same"}
    assert conversation(script.requests[2].messages) == [
        [("user", "Summarise a (1 of 2).")],
        [("assistant", "S1")],
        [("user", "Summarise b (2 of 2).")],
        [("assistant", "S2")],
        [("user", "Compare: S1; S2")],
    ]
    assert list(result.slot_messages) == ["summary[0]", "summary[1]", "verdict"]


async def test_a_loop_with_no_items_runs_its_else_body_and_gives_an_empty_list() -> None:
    source = "{% for x in xs %}About {{ x }}: [[note]]{% else %}Nothing to do. [[empty]]{% endfor %}"
    script = Script(["ok"])
    result = await complete_async(source, context={"xs": []}, model=script.model, journal=False)
    assert result.results == {"note": [], "empty": "ok"}


async def test_a_loop_over_pairs_and_a_typed_slot_inside() -> None:
    source = "{% for name, score in rows %}Did {{ name }} pass with {{ score }}? [[bool:passed]]{% endfor %}"
    script = Script([Final(True)], [Final(False)])
    result = await complete_async(source, context={"rows": [("ada", 72), ("bob", 31)]}, model=script.model,
                                  journal=False)  # fmt: skip
    assert result.results == {"passed": [True, False]}


def _routed(
    answers: dict[str, str], started: list[str], gate: asyncio.Event | None = None, seen: dict[str, Any] | None = None
) -> FunctionModel:
    """A model that answers by the last user line, noting which questions it has started on."""

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        prompt = next(p.content for p in reversed(messages[-1].parts) if isinstance(p, UserPromptPart))
        question = str(prompt).splitlines()[-1]
        started.append(question)
        if seen is not None:
            seen[question] = conversation(messages)
        if gate is not None:
            if len(started) >= 2:
                gate.set()
            await asyncio.wait_for(gate.wait(), 30)  # both members must be in flight at once (a hang guard)
        answer = answers[question]
        if info.output_tools:
            yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args=answer, tool_call_id="o")}
        else:
            yield answer

    return FunctionModel(stream_function=respond, model_name="routed")


async def test_together_runs_its_slots_concurrently_and_merges_in_source_order() -> None:
    source = (
        "Review: {{ review }}\n<together>\nSentiment? [[pick:sentiment|positive, negative]]\n"
        "Main complaint? [[complaint]]\n</together>\nWrite a reply. [[reply]]"
    )
    started: list[str] = []
    seen: dict[str, Any] = {}
    answers = {"Sentiment?": '{"response": "negative"}', "Main complaint?": "late", "Write a reply.": "Sorry"}
    model = _routed(answers, started, asyncio.Event(), seen)
    result = await complete_async(source, context={"review": "Late again"}, model=model, journal=False)
    assert result.results == {"sentiment": "negative", "complaint": "late", "reply": "Sorry"}
    assert sorted(started[:2]) == ["Main complaint?", "Sentiment?"]  # both in flight before either answered
    assert seen["Sentiment?"] == [[("user", "Review: Late again\nSentiment?")]]
    assert seen["Main complaint?"] == [[("user", "Review: Late again\nMain complaint?")]]
    # The reply sees the text before the block once, then each question and answer in source order.
    assert seen["Write a reply."] == [
        [("user", "Review: Late again"), ("user", "Sentiment?")],
        [("assistant", "negative")],
        [("user", "Main complaint?")],
        [("assistant", "late")],
        [("user", "Write a reply.")],
    ]
    assert list(result.slot_messages) == ["sentiment", "complaint", "reply"]


async def test_together_members_see_the_text_before_the_block_not_each_other() -> None:
    seen: dict[str, list[Any]] = {}

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        parts = [(type(p).__name__, getattr(p, "content", "")) for m in messages for p in m.parts]
        last = str(parts[-1][1])
        seen[last.splitlines()[-1]] = parts
        yield "A" if "First" in last else "B"

    model = FunctionModel(stream_function=respond, model_name="m")
    source = "Earlier? [[e]]\nShared text.\n<together>First? [[a]] Second? [[b]]</together> Then. [[c]]"
    seen_before = Script(["E"])
    del seen_before
    result = await complete_async(source.replace("Earlier? [[e]]\n", ""), model=model, journal=False)
    assert result.results == {"a": "A", "b": "B", "c": "B"}
    assert seen["First?"] == [("UserPromptPart", "Shared text.\nFirst?")]
    assert seen["Second?"] == [("UserPromptPart", "Shared text.\nSecond?")]


async def test_stop_stops_every_slot_of_a_together_block() -> None:
    started: list[str] = []
    never = asyncio.Event()

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        started.append("x")
        await never.wait()
        yield "never"

    model = FunctionModel(stream_function=respond, model_name="slow")
    run = start("<together>A [[a]] B [[b]]</together>", RunOptions(model=model, journal=False))
    for _ in range(200):
        if len(started) == 2:
            break
        await asyncio.sleep(0.01)
    assert len(started) == 2
    run.cancel()
    result = await run
    assert result.status == "stopped"
    assert [e.slot for e in run.events_so_far if e.kind == "slot_failed"] == ["a", "b"]


async def test_a_failing_member_keeps_its_siblings_values() -> None:
    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        prompt = str(messages[-1].parts[-1].content)  # type: ignore[union-attr]
        if prompt == "A":
            raise RuntimeError("provider down")
        yield "fine"

    model = FunctionModel(stream_function=respond, model_name="m")
    result = await start("<together>A [[a]] B [[b]]</together>", RunOptions(model=model, journal=False))
    assert result.status == "failed" and "provider down" in (result.error or "")
    assert result.results == {"b": "fine"}


async def test_a_header_opens_every_segment_and_is_history_not_the_prompt() -> None:
    source = "<header>Essay: {{ essay }}</header>\nGrade it. [[grade]]\n<checkpoint>\nComment. [[comment]]"
    script = Script(["B+"], ["Good"])
    await complete_async(source, context={"essay": "On cats"}, model=script.model, journal=False)
    assert conversation(script.requests[0].messages) == [[("user", "Essay: On cats"), ("user", "Grade it.")]]
    assert conversation(script.requests[1].messages) == [[("user", "Essay: On cats"), ("user", "Comment.")]]


async def test_system_scopes_local_global_and_replace() -> None:
    source = (
        "<system>Global.</system><system local>Local.</system>A [[a]]\n<checkpoint>\nB [[b]]\n"
        "<system replace>Only this.</system>C [[c]]"
    )
    script = Script(["1"], ["2"], ["3"])
    await complete_async(source, model=script.model, journal=False)
    assert [r.instructions for r in script.requests] == ["Global.\n\nLocal.", "Global.", "Only this."]


async def test_a_name_used_again_after_a_checkpoint_takes_the_latest_value_and_keeps_both() -> None:
    source = "Draft it. [[draft]]\n<checkpoint>\nImprove: {{ draft }} [[draft]]"
    script = Script(["v1"], ["v2"])
    events = [e async for e in stream(source, model=script.model, journal=False)]
    assert [e for e in brief(events) if e[0] == "slot_completed"] == [
        ("slot_completed", "draft", "v1"),
        ("slot_completed", "draft#2", "v2"),
    ]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.results == {"draft": "v2"}
    assert list(result.slot_messages) == ["draft", "draft#2"]
    assert conversation(script.requests[1].messages) == [[("user", "Improve: v1")]]


async def test_an_included_file_runs_with_its_slots(tmp_path: Path) -> None:
    (tmp_path / "rubric.sd").write_text("<system>Grade strictly.</system>\nRubric: clarity. [[focus]]\n")
    template = compile_template('<include src="rubric.sd"/>\nEssay: {{ essay }} [[grade]]', base_dir=tmp_path)
    script = Script(["clarity"], ["B"])
    result = await complete_async(template, context={"essay": "x"}, model=script.model, journal=False)
    assert result.results == {"focus": "clarity", "grade": "B"}
    assert [r.instructions for r in script.requests] == ["Grade strictly.", "Grade strictly."]


async def test_tool_calls_work_inside_a_loop() -> None:
    def lookup(code: str) -> str:
        """Look a module up."""
        return f"{code}: Dr Smith"

    calls = iter([[ToolCallPart("lookup", {"code": "A1"})], None, [ToolCallPart("lookup", {"code": "B2"})], None])

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        step = next(calls)
        if step is None:
            yield "done"
        else:
            yield {0: DeltaToolCall(name="lookup", json_args='{"code": "x"}', tool_call_id=f"c{id(step)}")}

    model = FunctionModel(stream_function=respond, model_name="m")
    source = "{% for c in codes %}Who leads {{ c }}? [[who|use_tools]]{% endfor %}"
    result = await complete_async(source, context={"codes": ["A1", "B2"]}, model=model, tools=[lookup], journal=False)
    assert result.results == {"who": ["done", "done"]}
    assert isinstance(TextPart("x"), TextPart)


async def test_a_stopped_loop_resumes_at_the_unfinished_item() -> None:
    calls: list[int] = []
    hanging = asyncio.Event()

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> Any:
        calls.append(len(calls))
        if len(calls) == 2:  # the second item's first request hangs until the run is stopped
            hanging.set()
            await asyncio.Event().wait()
        yield {1: "S1", 3: "S2", 4: "S3"}[len(calls)]

    model = FunctionModel(stream_function=respond, model_name="m")
    source = "{% for x in xs %}About {{ x }}. [[s]]{% endfor %}"
    run = start(source, RunOptions(context={"xs": ["a", "b", "c"]}, model=model, journal=False))
    await asyncio.wait_for(hanging.wait(), 5)
    run.cancel()
    stopped = await run
    assert (stopped.status, stopped.results) == ("stopped", {"s": ["S1"]})
    resumed = await asyncio.wait_for(run.resume().wait(), 5)
    assert (resumed.status, resumed.results) == ("completed", {"s": ["S1", "S2", "S3"]})


async def test_a_guard_inside_together_runs_beside_its_siblings() -> None:
    guard = Script([Final({"triggered": False, "reason": "fine"}, raw=True)])
    main = Script(["answer"])
    from .conftest import routed

    result = await complete_async("<together>Safe? [[halt:g]] Q [[a]]</together>", model=routed(guard, main),
                                  journal=False)  # fmt: skip
    assert result.results == {"g": {"triggered": False, "reason": "fine"}, "a": "answer"}
