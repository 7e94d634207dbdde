"""The offline default model behaves like a careful model: arguments from the prompt, never made up."""

from __future__ import annotations

import pytest

from agentcell import complete, tool
from agentcell.events import ThinkingDelta, ToolStarted
from agentcell.providers.offline import _fill


@pytest.mark.parametrize(("schema", "prompt", "args"), [
    ({"path": {"type": "string"}, "lines": {"type": "integer"}}, "Summarise readings/week3.md, first 20 lines",
     {"path": "readings/week3.md", "lines": 20}),
    ({"module_code": {"type": "string"}}, "Who leads PSYC605?", {"module_code": "PSYC605"}),
    ({"a": {"type": "number"}, "b": {"type": "number"}}, "Add 2.5 and 40", {"a": 2.5, "b": 40.0}),
    ({"query": {"type": "string"}}, "Find papers on sleep and memory", {"query": "Find papers on sleep and memory"}),
    ({"title": {"type": "string"}}, 'Rename it to "Week 3 notes" please', {"title": "Week 3 notes"}),
    ({"city": {"type": "string"}}, "What is the weather in Oslo today?", {"city": "Oslo"}),
    ({"level": {"enum": ["undergraduate", "postgraduate"]}}, "List postgraduate modules", {"level": "postgraduate"}),
], ids=["file-and-number", "code", "two-numbers", "free-text", "quoted", "place-name", "enum-named"])
def test_arguments_come_from_the_prompt_by_name_and_type(
    schema: dict[str, object], prompt: str, args: dict[str, object]
) -> None:
    assert _fill({"properties": schema, "required": list(schema)}, prompt) == (args, [])


def test_an_argument_the_prompt_does_not_hold_is_missing_not_invented() -> None:
    schema = {"properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 3}},
              "required": ["city"]}
    assert _fill(schema, "What is the weather like?") == ({}, ["city"])


@tool
def forecast(city: str) -> str:
    """The weather forecast for a city."""
    raise AssertionError("the offline model must not call a tool it cannot fill")


def test_offline_model_does_not_call_a_tool_it_cannot_fill_and_says_why() -> None:
    result = complete("What is the weather like? [[answer|use_tools=true]]", model="offline:fast", tools=[forecast])
    assert result.status == "completed" and result.usage.tool_calls == 0
    assert ("It did not call `forecast`: nothing in the prompt fills its required argument `city`, "
            "and it does not make values up.") in result.answer
    # From Python, the advice names Python's way to pick a model (not a cell flag).
    assert 'Switch by passing `model="openai:gpt-4o-mini"`' in result.answer and "%agent" not in result.answer


def test_offline_typed_answer_has_the_right_type_and_says_it_is_a_placeholder() -> None:
    from agentcell import stream

    async def collect() -> list[object]:
        return [e async for e in stream("How many moons has Mars? [[int:moons]]", model="offline:fast")]

    import asyncio

    events = asyncio.run(collect())
    thoughts = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert "offline placeholder of the right type" in thoughts
    assert not any(isinstance(e, ToolStarted) for e in events)
    result = events[-1].result  # type: ignore[attr-defined]
    assert isinstance(result.results["moons"], int)


def test_offline_guard_verdict_gives_a_reason_not_words_of_the_prompt() -> None:
    """A guard's reason is read out in class: `'PSYC605'` (a code taken from the prompt) said nothing."""
    result = complete("Is this an injection? <q>Who leads PSYC605?</q> [[halt:injection]]\nWho leads PSYC605? [[answer]]",
                      model="offline:fast")
    verdict = result.results["injection"]
    assert verdict == {"triggered": False, "reason": "the offline model does not judge content; it always answers no"}
