"""agentcell against llama.cpp's server where it differs from OpenAI: no usage in streams, `max_tokens` only,
streams cut off for waiting requests, tool calls only unstreamed, a small model that writes prose for JSON.

SmolLM2-135M is weak: these tests check what the run does (a value of the right type or one sentence saying
what the model wrote; every batch row accounted for with the server's reason), never what an answer says.
"""

from __future__ import annotations

from typing import Any

import pytest

import agentcell
from agentcell.engine import start_run
from agentcell.result import RunResult
from tests.real_model.llama_server import LlamaServer

pytestmark = [pytest.mark.real_model, pytest.mark.anyio]

BOUNDED = "max_tokens=60, retries=1"
"""Typed slots' options here: the model rambles without a token bound, and one retry shows the retry path."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def run(template: str, model: str, **options: Any) -> tuple[RunResult, list[Any]]:
    handle = start_run(template, model=model, journal=False, **options)
    result = await handle
    return result, list(handle.events_so_far)


async def test_usage_is_never_zero_for_an_answer_and_is_marked_estimated(server: LlamaServer) -> None:
    result, events = await run("Say hello in one short sentence. [[answer|max_tokens=30]]", server.model())
    assert result.status == "completed", result.error
    assert result["answer"].strip()
    assert result.usage.output_tokens > 0 and result.usage.input_tokens > 0 and result.usage.estimated
    assert all(e.usage.estimated and e.usage.output_tokens > 0 for e in events if e.kind == "request_completed")


async def test_max_tokens_5_gives_a_short_answer(server: LlamaServer) -> None:
    result, events = await run("Write a long story about the sea. [[answer|max_tokens=5]]", server.model())
    assert result.status == "completed", result.error
    assert 0 < len(result["answer"].split()) <= 5
    (wire,) = [e for e in events if e.kind == "http_exchange"]
    assert wire.request["body"]["max_tokens"] == 5 and "max_completion_tokens" not in wire.request["body"]


async def test_the_teaching_capture_holds_the_real_request_and_response(server: LlamaServer) -> None:
    result, events = await run("Name one colour. [[answer|max_tokens=12]]", server.model())
    assert result.status == "completed", result.error
    (wire,) = [e for e in events if e.kind == "http_exchange"]
    assert wire.request["url"] == f"{server.base_url}/chat/completions"
    assert wire.request["body"]["stream"] is True
    assert wire.request["body"]["messages"][-1]["content"] == "Name one colour."
    assert wire.response["status"] == 200
    streamed = [e for e in wire.response["events"] if isinstance(e, dict) and e.get("choices")]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in streamed)
    assert text.strip() == result["answer"].strip()


@pytest.mark.parametrize("mode", ["prompted", "auto"])
@pytest.mark.parametrize(
    ("slot", "kind"),
    [("[[int:n|{o}]]", int), ("[[bool:b|{o}]]", bool), ("[[pick:c|red, green, blue, {o}]]", str),
     ("[[json:j|{o}]]", object)],
)
async def test_typed_slots_give_a_value_or_say_what_the_model_wrote(
    server: LlamaServer, mode: str, slot: str, kind: type[Any]
) -> None:
    result, _ = await run("Answer the question about a cat: how many legs, is it an animal, which colour, "
                          "describe it. " + slot.format(o=BOUNDED), server.model(), output_mode=mode)
    if result.status == "completed":
        (value,) = result.results.values()
        assert isinstance(value, kind) and (kind is not int or not isinstance(value, bool))
    else:
        assert result.status == "failed"
        error = result.error or ""
        assert "refused" not in error and "budget" not in error
        assert any(said in error for said in ("the model last wrote", "the model wrote", "the server answered with no text"))
        assert error.count("\n") == 0  # one sentence, one line
    # In `auto`, a first answer in prose or with nothing switched the slot to `prompted`, visibly; a first answer
    # that called the output tool with bad arguments stays in `tool` mode (the model's fault, fed back to it).
    assert all("output mode prompted" in w for w in result.warnings), result.warnings


async def test_a_batch_of_20_at_concurrency_4_accounts_for_every_row(server: LlamaServer) -> None:
    mark = server.log_mark()
    batch = agentcell.map("Write one short sentence about {{ item }}. [[answer|max_tokens=40]]",
                          [f"the number {i}" for i in range(20)], concurrency=4, model=server.model(), journal=False)
    result = await batch
    assert len(result.rows) == 20
    assert "budget_exhausted" not in result.counts
    for row in result.rows:
        assert row.status == "completed" or (row.error and "the server" in row.error), (row.status, row.error)
        if row.status == "completed":
            assert row.usage.output_tokens > 0
    assert server.log_since(mark).count("POST /v1/chat/completions") == result.usage.requests


async def test_a_tool_call_against_the_function_calling_format(function_calling_server: LlamaServer) -> None:
    calls: list[str] = []

    def lookup(city: str) -> str:
        """Look up today's weather in a city."""
        calls.append(city)
        return "sunny"

    result, events = await run("What is the weather in Paris? Use the lookup tool. [[answer|use_tools, max_iter=3, "
                               "max_tokens=60]]", function_calling_server.model(), tools=[lookup])
    assert calls, (result.status, result.error)
    assert result.usage.tool_calls >= 1
    assert any("without streaming" in w for w in result.warnings)
    unstreamed = [e for e in events if e.kind == "http_exchange" and e.request["body"].get("stream") is not True]
    assert unstreamed and unstreamed[0].request["body"]["tools"][0]["function"]["name"] == "lookup"
