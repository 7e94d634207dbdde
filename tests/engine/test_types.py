"""Every slot type, quantifier and constraint end to end: compiled, run on a scripted model, and the
Python type and value of each result asserted (struckdown 0.18's types, quantifiers and constraints)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart
from typing_extensions import TypedDict

from agentcell.engine import complete_async
from agentcell.errors import RunError, TemplateSyntaxError
from agentcell.options import RunOptions

from .conftest import Final, Script

pytestmark = pytest.mark.anyio

NOW = dt.datetime(2026, 3, 2, 14, 5, tzinfo=dt.timezone(dt.timedelta(hours=1)))


async def run(source: str, *responses: Any, context: dict[str, Any] | None = None) -> tuple[dict[str, Any], Script]:
    script = Script(*responses)
    from agentcell.engine import start

    result = await start(source, RunOptions(context=context, model=script.model, now=NOW, journal=False))
    assert result.status == "completed", result.error
    return dict(result.results), script


def retries(script: Script) -> list[str]:
    """What the model was told to fix, request by request (validation retries)."""
    told = []
    for request in script.requests:
        last = request.messages[-1]
        for part in last.parts if isinstance(last, ModelRequest) else ():
            if isinstance(part, RetryPromptPart):
                told.append(part.model_response())
            elif isinstance(part, ToolReturnPart) and part.outcome == "retried":
                told.append(str(part.content))
            elif isinstance(part, UserPromptPart) and "<pyai:retry_feedback>" in str(part.content):
                told.append(str(part.content).split("<pyai:retry_feedback>\n")[1])
    return told


@pytest.mark.parametrize(
    ("source", "answer", "value"),
    [
        ("[[int*:xs]]", [1, 2, 3], [1, 2, 3]),
        ("[[int{2}:xs]]", [4, 5], [4, 5]),
        ("[[number+:xs]]", [1.5, 2], [1.5, 2.0]),
        ("[[bool?:xs]]", [], []),
        ("[[pick{1,2}:tags|urgent, billing, bug]]", ["bug", "urgent"], ["bug", "urgent"]),
        ("[[ideas{3}]]", ["a", "b", "c"], ["a", "b", "c"]),
        ("[[think+:steps]]", ["look", "decide"], ["look", "decide"]),
        ("[[record*:rows]]", [{"a": 1}], [{"a": 1}]),
        ("[[json{2}:pair]]", [1, "x"], [1, "x"]),
        ("[[!int{2}:]]", [7, 8], [7, 8]),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
async def test_quantified_slots_give_python_lists(source: str, answer: list[Any], value: list[Any]) -> None:
    results, _ = await run(source, [Final(answer)])
    [got] = results.values()
    assert got == value and type(got) is list
    assert [type(item) for item in got] == [type(item) for item in value]


async def test_a_list_of_the_wrong_length_is_a_validation_retry() -> None:
    results, script = await run("Three ideas [[ideas{3}]]", [Final(["a"])], [Final(["a", "b", "c"])])
    assert results == {"ideas": ["a", "b", "c"]}
    assert len(script.requests) == 2
    assert "at least 3 items" in retries(script)[0]


async def test_the_list_schema_carries_its_bounds_and_a_count_phrase() -> None:
    seen: list[dict[str, Any]] = []

    def answer(messages: Any, info: Any) -> list[Any]:
        seen.append(info.output_tools[0].parameters_json_schema)
        return [Final([1, 2])]

    await run("[[int{1,4}:xs|min=0, max=9]]", answer)
    schema = seen[0]["properties"]["response"]
    assert (schema["minItems"], schema["maxItems"]) == (1, 4)
    assert schema["items"] == {"maximum": 9, "minimum": 0, "type": "integer"}
    assert schema["description"].startswith("A list of between 1 and 4 items, each: A whole number.")


@pytest.mark.parametrize(
    ("source", "answers", "value"),
    [
        ("[[int:n|min=1, max=5]]", [9, 3], 3),
        ("[[int:n|gt=0, lt=10]]", [10, 4], 4),
        ("[[number:x|ge=0.5, le=1]]", [2, 0.75], 0.75),
        ('[[answer|pattern="^[A-Z]{3}$"]]', ["abc", "ABC"], "ABC"),
        ("[[answer|min_length=5]]", ["hey", "hello"], "hello"),
        ("[[answer|maxlength=3]]", ["toolong", "ok"], "ok"),
        ('[[date:d|min="2026-01-01"]]', ["2025-12-31", "2026-01-05"], dt.date(2026, 1, 5)),
    ],
    ids=["int-range", "int-strict", "number-range", "pattern", "min-length", "max-length", "date-min"],
)
async def test_a_constraint_refuses_an_answer_outside_it(source: str, answers: list[Any], value: Any) -> None:
    streams = "answer" in source.split("|")[0]
    responses = [[text] if streams else [Final(text)] for text in answers]
    results, script = await run(source, *responses)
    [got] = results.values()
    assert got == value and type(got) is type(value)
    assert len(script.requests) == len(answers)


async def test_temporal_values_are_real_dates_and_times_resolved_against_the_reference() -> None:
    source = (
        "The review moved to next Tuesday at 3pm. [[datetime:when]] Which day? [[date:day]] "
        "At? [[time:at]] For how long? [[duration:length]]"
    )
    results, script = await run(
        source,
        [Final("2026-03-10T15:00:00")],
        [Final("2026-03-10")],
        [Final("15:00:00")],
        [Final("PT1H30M")],
    )
    assert results == {
        "when": dt.datetime(2026, 3, 10, 15, 0, tzinfo=NOW.tzinfo),  # a naive answer takes the reference zone
        "day": dt.date(2026, 3, 10),
        "at": dt.time(15, 0),
        "length": dt.timedelta(hours=1, minutes=30),
    }
    assert script.requests[0].instructions == (
        "The current date and time is Monday 2026-03-02T14:05:00+01:00 (UTC+01:00). Resolve relative dates and "
        "times (today, next Tuesday, in two hours) against it, and give times in this time zone unless the text "
        "says otherwise."
    )


async def test_the_reference_time_is_recorded_in_the_result() -> None:
    from agentcell.engine import start

    script = Script([Final("2026-03-03")])
    result = await start("Tomorrow? [[date:d]]", RunOptions(model=script.model, now=NOW, journal=False))
    assert result.reference_time == "2026-03-02T14:05:00+01:00"
    assert '"reference_time": "2026-03-02T14:05:00+01:00"' in result.to_json()


async def test_a_date_list_and_a_date_rule() -> None:
    results, _ = await run(
        "Every Monday in March 2026 [[date*:mondays]] As a rule: [[date_rule:rule]]",
        [Final(["2026-03-02", "2026-03-09"])],
        [Final({"freq": "WEEKLY", "dtstart": "2026-03-02", "byweekday": [0], "until": "2026-03-31"})],
    )
    assert results["mondays"] == [dt.date(2026, 3, 2), dt.date(2026, 3, 9)]
    assert results["rule"] == {
        "freq": "WEEKLY", "dtstart": dt.date(2026, 3, 2), "count": None, "until": dt.date(2026, 3, 31),
        "interval": 1, "byweekday": [0], "bymonth": None, "bymonthday": None, "bysetpos": None,
    }  # fmt: skip


async def test_extract_must_quote_the_prompt_verbatim_or_it_is_retried() -> None:
    source = "Complaint: The delivery was three days late and the box was crushed.\nQuote the problem. [[extract:quote]]"
    results, script = await run(source, ["the parcel arrived late"], ["the box was crushed"])
    assert results == {"quote": "the box was crushed"}
    assert len(script.requests) == 2
    assert retries(script)[0].startswith("that is not a verbatim quote")


async def test_extract_lists_check_every_quote_and_a_persistent_inventor_fails_the_run() -> None:
    source = "Notes: alpha beta gamma.\n[[extract+:quotes]]"
    results, _ = await run(source, [Final(["alpha beta", "gamma"])])
    assert results == {"quotes": ["alpha beta", "gamma"]}
    # An inventor is fed back within the slot's budget (issue 17's retries); with retries=1 it gets one more go.
    script = Script([Final(["delta"])], [Final(["delta"])])
    with pytest.raises(RunError, match="Exceeded maximum output retries"):
        await complete_async(source.replace("quotes]]", "quotes|retries=1]]"), model=script.model, journal=False)


@pytest.mark.parametrize(
    ("source", "answer", "value"),
    [
        ("[[think:plan]]", ["first look"], "first look"),
        ("[[speak:line]]", ["Hello there."], "Hello there."),
        ("[[poem:verse]]", ["Autumn moonlight"], "Autumn moonlight"),
        ("[[boolean:ok]]", [Final(True)], True),
        ("[[default:d]]", ["fine"], "fine"),
        ("[[record:r]]", [Final({"name": "Ada", "age": 36})], {"name": "Ada", "age": 36}),
        ("[[decide:go]]", [Final(False)], False),
        ("[[decide:route|left, right]]", [Final("right")], "right"),
        ("[[score:quality|poor, fair, good]]", [Final(1.5)], 1.5),
        ("[[number:x]]", [Final(3)], 3.0),
        ("[[int:n]]", [Final(None)], None),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
async def test_each_type_gives_its_python_value(source: str, answer: list[Any], value: Any) -> None:
    results, _ = await run(source, answer)
    [got] = results.values()
    assert got == value and type(got) is type(value)


async def test_a_score_above_its_top_level_is_retried() -> None:
    results, script = await run("[[score:s|low, high]]", [Final(3)], [Final(1)])
    assert results == {"s": 1.0} and len(script.requests) == 2


class Person(BaseModel):
    name: str
    age: int


@dataclasses.dataclass
class Place:
    city: str


class Pet(TypedDict):
    kind: str


async def test_notebook_types_give_exactly_that_type() -> None:
    results, script = await run(
        "Who? [[Person:person]] Where? [[Place:place]] Pets? [[Pet*:pets]]",
        [Final({"name": "Ada", "age": 36})],
        [Final({"city": "Lancaster"})],
        [Final([{"kind": "cat"}])],
        context={"Person": Person, "Place": Place, "Pet": Pet},
    )
    assert results == {"person": Person(name="Ada", age=36), "place": Place(city="Lancaster"), "pets": [{"kind": "cat"}]}
    assert type(results["person"]) is Person and type(results["place"]) is Place
    schema = script.requests[0]
    assert schema.outputs == ["final_result"]


async def test_an_unknown_notebook_type_is_an_error_before_any_model_call() -> None:
    script = Script()
    with pytest.raises(TemplateSyntaxError) as caught:
        await complete_async("[[Persn:p]]", model=script.model, context={"Person": Person}, journal=False)
    assert caught.value.message.startswith("no type or notebook class named 'Persn' (close: Person)")
    assert script.requests == []


async def test_a_notebook_value_that_is_not_a_class_fails_the_run_with_its_name() -> None:
    script = Script()
    with pytest.raises(RunError, match="Person is a str, not a pydantic model, dataclass or TypedDict"):
        await complete_async("[[Person:p]]", model=script.model, context={"Person": "Ada"}, journal=False)


async def test_seed_and_thinking_off_reach_the_model_settings() -> None:
    settings: list[Any] = []

    def answer(messages: Any, info: Any) -> list[Any]:
        settings.append(info.model_settings)
        return ["ok"]

    await run("[[a|seed=42, thinking=off, temperature=0.1]]", answer)
    assert settings == [{"seed": 42, "temperature": 0.1}]
