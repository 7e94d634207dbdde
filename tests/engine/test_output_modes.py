"""Output modes of typed slots (`tool`, `native`, `prompted`, `auto`) and answers that are a server's state, not
the model's decision (empty answers), on scripted models."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, RetryPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell.engine import answer_checks, start
from agentcell.errors import TemplateSyntaxError
from agentcell.options import RunOptions
from agentcell.result import RunResult
from agentcell.template import compile_template
from agentcell.usage import OutputMode

from .conftest import Call, Final, Script

pytestmark = pytest.mark.anyio

NOW = dt.datetime(2026, 3, 2, 14, 5, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The back-off before asking again is a real wait; these tests need its count, not its time."""
    monkeypatch.setattr(answer_checks, "BASE_DELAY_S", 0.0)


async def run(source: str, model: Any, *, mode: OutputMode = "auto", **more: Any) -> RunResult:
    return await start(source, RunOptions(model=model, now=NOW, journal=False, output_mode=mode, **more))


def modes(info: AgentInfo) -> str:
    return info.model_request_parameters.output_mode


class Recorder:
    """A streamed FunctionModel answering each request with `answer(info, index)`, recording the request."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.infos: list[AgentInfo] = []
        self.messages: list[list[ModelMessage]] = []
        self.model = FunctionModel(stream_function=self._stream, model_name="recorder")

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self.infos.append(info)
        self.messages.append(list(messages))
        for item in self.answer(info, len(self.infos) - 1):
            yield item


async def test_prompted_mode_asks_in_the_instructions_and_reads_json_from_the_text() -> None:
    rec = Recorder(lambda info, i: ['{"response": ', "4}"])
    result = await run("How many legs? [[int:n]]", rec.model, mode="prompted")
    assert result.status == "completed", result.error
    assert result["n"] == 4
    (info,) = rec.infos
    assert modes(info) == "prompted" and info.output_tools == [] and info.allow_text_output
    assert '"response"' in (info.instructions or "") and "JSON" in (info.instructions or "")


@pytest.mark.parametrize(
    ("source", "written", "value"),
    [
        ("[[int:n]]", 'Sure! Here it is: {"response": 4} Hope that helps.', 4),
        ("[[int:n]]", "```json\n4\n```", 4),
        ("[[int:n]]", "4", 4),
        ("[[bool:b]]", "true", True),
        ("[[pick:c|red, green, blue]]", "green.", "green"),
        ("[[json:j]]", 'The object: {"a": [1, 2]} as asked.', {"a": [1, 2]}),
    ],
)
async def test_prompted_answers_are_repaired_where_that_is_safe(source: str, written: str, value: Any) -> None:
    rec = Recorder(lambda info, i: [written])
    result = await run(f"Q? {source}", rec.model, mode="prompted")
    assert result.status == "completed", result.error
    assert next(iter(result.results.values())) == value
    assert len(rec.infos) == 1


async def test_a_prompted_answer_that_is_no_value_fails_saying_what_the_model_wrote() -> None:
    schema_echo = '{"properties": {"response": {"type": "integer"}}, "type": "object"}'
    rec = Recorder(lambda info, i: [schema_echo])
    result = await run("How many legs? [[int:n|retries=1]]", rec.model, mode="prompted")
    assert result.status == "failed"
    assert result.error is not None and "the model last wrote" in result.error and '"properties"' in result.error
    assert len(rec.infos) == 2  # the answer and one retry, as retries=1 says


async def test_native_mode_asks_for_the_json_schema_response_format() -> None:
    rec = Recorder(lambda info, i: ['{"response": 7}'])
    result = await run("Q? [[int:n]]", rec.model, mode="native")
    assert result.status == "completed", result.error
    assert result["n"] == 7
    assert modes(rec.infos[0]) == "native" and rec.infos[0].model_request_parameters.output_object is not None


async def test_the_slot_option_wins_over_the_run_mode() -> None:
    rec = Recorder(lambda info, i: ['{"response": 3}'])
    result = await run("Q? [[int:n|output_mode=prompted]]", rec.model, mode="tool")
    assert result.status == "completed", result.error
    assert modes(rec.infos[0]) == "prompted"


def test_a_bad_output_mode_option_names_the_choices() -> None:
    with pytest.raises(TemplateSyntaxError, match="expects one of auto, tool, native, prompted, got 'json'"):
        compile_template("[[int:n|output_mode=json]]")


async def test_auto_falls_back_to_prompted_when_the_output_tool_is_answered_with_prose() -> None:
    def answer(info: AgentInfo, i: int) -> list[str]:
        return ['{"response": 4}'] if modes(info) == "prompted" else ["A cat has four legs."]

    rec = Recorder(answer)
    result = await run("How many legs? [[int:n]] And how many ears? [[int:m]]", rec.model)
    assert result.status == "completed", result.error
    assert result["n"] == 4 and result["m"] == 4
    # One tool-mode request answered in prose, then prompted; the second slot asks prompted at once.
    assert [modes(i) for i in rec.infos] == ["tool", "prompted", "prompted"]
    (warning,) = result.warnings
    assert "answered the required output-tool call with prose ('A cat has four legs.')" in warning
    assert "output mode prompted" in warning
    assert result.usage.requests == 3


async def test_auto_falls_back_when_the_output_tool_is_answered_with_nothing() -> None:
    rec = Recorder(lambda info, i: ['{"response": 2}'] if modes(info) == "prompted" else [""])
    result = await run("Q? [[int:n]]", rec.model)
    assert result.status == "completed", result.error
    assert "answered the required output-tool call with nothing" in result.warnings[0]


async def test_tool_mode_keeps_pydantic_ais_own_retry_of_prose() -> None:
    script = Script(["A cat has four legs."], [Final(4)])
    result = await run("Q? [[int:n]]", script.model, mode="tool")
    assert result.status == "completed", result.error
    assert result["n"] == 4 and result.warnings == ()
    assert [r.outputs for r in script.requests] == [["final_result"], ["final_result"]]


async def test_auto_on_a_model_that_answers_the_tool_is_tool_mode() -> None:
    script = Script([Final(5)])
    result = await run("Q? [[int:n]]", script.model)
    assert result["n"] == 5 and result.warnings == ()


async def test_an_empty_answer_is_asked_for_again_without_feeding_it_back() -> None:
    rec = Recorder(lambda info, i: [""] if i < 2 else ["Hello."])
    result = await run("Say hi. [[answer]]", rec.model)
    assert result.status == "completed", result.error
    assert result["answer"] == "Hello."
    assert len(rec.infos) == 3
    # Asked again from the same request: no "please answer" retry prompt reached the model.
    sent = [[(type(p).__name__, getattr(p, "content", None)) for m in ms for p in m.parts] for ms in rec.messages]
    assert sent[0] == sent[1] == sent[2] == [("UserPromptPart", "Say hi.")]
    assert not any(isinstance(p, RetryPromptPart) for ms in rec.messages for m in ms for p in m.parts)
    assert result.usage.requests == 3


async def test_answers_that_stay_empty_fail_in_one_sentence_never_refused_never_budget() -> None:
    rec = Recorder(lambda info, i: [""])
    result = await run("Say hi. [[answer]]", rec.model)
    assert result.status == "failed"
    assert result.error is not None
    assert "the server answered with no text" in result.error and "refused" not in result.error
    assert len(rec.infos) == answer_checks.ANSWER_RETRIES + 1


async def test_a_typed_slot_whose_answers_stay_empty_suggests_prompted() -> None:
    rec = Recorder(lambda info, i: [""])
    result = await run("Q? [[int:n]]", rec.model, mode="tool")
    assert result.status == "failed"
    assert result.error is not None and "no text and no tool call" in result.error
    assert "output_mode='prompted'" in result.error


async def test_budget_advice_never_suggests_the_max_iter_already_set() -> None:
    script = Script(*[[Call("ping")] for _ in range(3)])

    def ping() -> str:
        """Ping."""
        return "pong"

    result = await start("Go. [[answer|use_tools, max_iter=3]]",
                         RunOptions(model=script.model, tools=[ping], journal=False, now=NOW))
    assert result.status == "budget_exhausted"
    assert result.error is not None and "raise max_iter= on the slot" in result.error
    assert "set max_iter" not in result.error and "or set" not in result.error


async def test_a_slot_with_tools_whose_rounds_end_without_a_call_says_the_server_may_not_support_them() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    script = Script(*[["I will not call anything."] for _ in range(2)])
    result = await start("Go. [[int:n|use_tools, max_iter=2]]",
                         RunOptions(model=script.model, tools=[ping], journal=False, now=NOW, output_mode="tool"))
    assert result.status in ("budget_exhausted", "failed")
    assert result.error is not None and "the server may not support tool calling" in result.error
