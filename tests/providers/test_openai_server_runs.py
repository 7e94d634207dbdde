"""Runs against a real streaming HTTP server on loopback, through pydantic-ai's real OpenAI model: models, Stop closing the connection, retries.

The server (`tests/openai_server.py`) speaks Chat Completions with SSE; agentcell reaches it exactly as a
user pointing at Ollama would: `openai-compat:MODEL@BASE_URL`, or an `OpenAIChatModel` built by hand.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from openai import AsyncOpenAI
from pydantic_ai import Agent

from agentcell.engine import coalesce, complete_async, start_run
from agentcell.errors import RunError
from agentcell.events.json import to_wire
from agentcell.providers import RetryingModel, RetryPolicy, openai_compatible
from tests.openai_server import Call, Drop, Fail, FakeOpenAI, Pause, Reply, Text, Think, Usage, validate_chat_request

from .conftest import eventually, kinds, lookup_module, of, user_model

pytestmark = pytest.mark.anyio

QUESTION = "Who leads PSYC605? [[answer|use_tools=true]]"
HANG_GUARD_S = 60
"""A hang guard, not a time limit under test: a run that never ends fails the test after this long."""
ANSWER = "PSYC605 (Cognition and Emotion) is led by Dr Ada Byron."


def compat(server: FakeOpenAI) -> str:
    return f"openai-compat:fake-model@{server.base_url}"


def two_rounds() -> tuple[Reply, Reply]:
    return (
        Reply(
            Think("The user asks about a module; ", pieces=2),
            Think("I should look it up."),
            Call("lookup_module", {"module_code": "PSYC605"}, id="call_a", pieces=4),
            Usage(31, 9),
        ),
        Reply(Think("The tool answered."), Text(ANSWER, pieces=6), Usage(58, 14)),
    )


async def test_two_round_tool_run_with_thinking_streams_and_completes(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coalesce, "INTERVAL", 0)  # a local server streams faster than 20 ms a piece: don't merge
    server.script(*two_rounds())
    run = start_run(QUESTION, model=compat(server), tools=[lookup_module])
    result = await run
    events = run.events_so_far

    assert result.status == "completed", result.error
    assert result.answer == ANSWER
    assert events[0].model == compat(server) and events[0].offline is False
    assert "".join(e.text for e in of(events, "thinking_delta")).startswith("The user asks about a module; I should")
    assert len(of(events, "token_delta")) >= 5  # the answer streamed in pieces
    assert "".join(e.text for e in of(events, "token_delta")) == ANSWER
    (started,) = of(events, "tool_started")
    assert started.args == {"module_code": "PSYC605"}  # arguments reassembled from 4 deltas
    (done,) = of(events, "tool_completed")
    assert done.ok and "Dr Ada Byron" in done.result
    assert result.usage.requests == 2 and result.usage.tool_calls == 1
    assert (result.usage.input_tokens, result.usage.output_tokens) == (31 + 58, 9 + 14)

    first, second = server.chat_requests
    assert first.stream and first.body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in first.body["tools"]] == ["lookup_module"]
    assert [m["role"] for m in second.messages] == ["user", "assistant", "tool"]
    assert second.messages[1]["tool_calls"][0]["id"] == "call_a"
    assert second.messages[2] == {"role": "tool", "tool_call_id": "call_a", "content": MODULES_PSYC605}
    assert not first.problems and not second.problems


MODULES_PSYC605 = "Cognition and Emotion, led by Dr Ada Byron"


async def test_several_calls_in_one_response_all_run(server: FakeOpenAI) -> None:
    server.script(
        Reply(
            Call("lookup_module", {"module_code": "PSYC605"}, id="c1", pieces=3),
            Call("lookup_module", {"module_code": "PSYC606"}, id="c2", pieces=3),
        ),
        Reply(Text("Byron and Baddeley.")),
    )
    run = start_run("Who leads PSYC605 and PSYC606? [[answer|use_tools=true]]", model=compat(server),
                    tools=[lookup_module])
    result = await run
    assert result.status == "completed" and result.answer == "Byron and Baddeley."
    assert sorted(e.args["module_code"] for e in of(run.events_so_far, "tool_started")) == ["PSYC605", "PSYC606"]
    tool_messages = [m for m in server.chat_requests[1].messages if m["role"] == "tool"]
    assert {m["tool_call_id"] for m in tool_messages} == {"c1", "c2"}


@dataclass
class Waits:
    """The back-off waits `RetryingModel` asked for, how each ended, and how many requests the server had then."""

    asked: list[float] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    requests_after: list[int] = field(default_factory=list)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch, server: FakeOpenAI) -> Waits:
    """Every `RetryingModel` built during the test waits through a recorder (a real `asyncio.sleep`)."""
    seen = Waits()
    real_init = RetryingModel.__init__

    async def sleep(seconds: float) -> None:
        seen.asked.append(seconds)
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            seen.ended.append("cancelled")
            raise
        seen.ended.append("waited")
        seen.requests_after.append(len(server.chat_requests))

    def init(self: RetryingModel, wrapped: Any, **options: Any) -> None:
        options.setdefault("sleep", sleep)
        real_init(self, wrapped, **options)

    monkeypatch.setattr(RetryingModel, "__init__", init)
    return seen


async def test_stop_mid_stream_closes_the_connection(server: FakeOpenAI) -> None:
    words = " ".join(f"word{i}" for i in range(200))
    server.script(Reply(Text(words, pieces=200, delay=0.05)))  # 10 s of stream: only a Stop ends it early
    run = start_run("Talk for a long time. [[answer]]", model=user_model(server))
    await eventually(lambda: len(of(run.events_so_far, "token_delta")) >= 5)
    run.cancel()
    result = await asyncio.wait_for(run.wait(), HANG_GUARD_S)

    (request,) = server.chat_requests
    await eventually(lambda: request.outcome != "pending", timeout=HANG_GUARD_S)
    # The client closed the connection: the server saw it go before its response was complete.
    assert request.outcome == "disconnected" and request.disconnected_at is not None
    assert request.chunks_sent < 200
    assert result.status == "stopped"
    shown = "".join(e.text for e in of(run.events_so_far, "token_delta"))
    assert shown and result.partial["answer"] == shown
    assert words.startswith(shown)
    (failed,) = of(run.events_so_far, "slot_failed")
    assert failed.status == "stopped" and failed.partial == shown


async def test_429_then_200_waits_the_advertised_time_and_shows_retrying(server: FakeOpenAI, waits: Waits) -> None:
    server.script(Fail(429, "Rate limit reached for requests", retry_after=0.2, type="requests",
                       code="rate_limit_exceeded"), Reply(Text("Done after waiting.")))
    run = start_run("Hi [[answer]]", model=user_model(server))  # a hand-built model gets retries too
    result = await run
    assert result.status == "completed" and result.answer == "Done after waiting."
    (retrying,) = of(run.events_so_far, "retrying")
    assert (retrying.slot, retrying.attempt, retrying.delay_s, retrying.reason) == ("answer", 1, 0.2, "429")
    assert kinds(run.events_so_far, collapse=True, skip=("http_exchange",))[:5] == [
        "run_started", "slot_started", "model_request", "retrying", "token_delta"]
    refused, served = server.chat_requests  # the SDK's own silent retries are off: exactly two requests
    assert refused.status == 429 and served.outcome == "completed"
    # It waited the advertised Retry-After, to the end, and asked again only then.
    assert (waits.asked, waits.ended, waits.requests_after) == ([0.2], ["waited"], [1])
    wire = to_wire(retrying, t=0.0)
    assert json.loads(json.dumps(wire))["kind"] == "retrying"


async def test_5xx_are_retried_with_growing_backoff(server: FakeOpenAI) -> None:
    server.script(Fail(500, "boom"), Fail(503, "overloaded"), Reply(Text("Third time lucky.")))
    model = RetryingModel(openai_compatible("fake-model", server.base_url), policy=RetryPolicy(base_delay=0.05))
    run = start_run("Hi [[answer]]", model=model)
    result = await run
    assert result.status == "completed" and result.answer == "Third time lucky."
    first, second = of(run.events_so_far, "retrying")
    assert (first.reason, second.reason) == ("500", "503")
    assert (first.attempt, second.attempt) == (1, 2)
    assert 0.0375 <= first.delay_s <= 0.0625 and 0.075 <= second.delay_s <= 0.125  # base·2ⁿ⁻¹ ± 25 %
    assert len(server.chat_requests) == 3


async def test_retries_are_bounded(server: FakeOpenAI) -> None:
    server.script(*(Fail(503, "still down") for _ in range(5)))
    model = RetryingModel(openai_compatible("fake-model", server.base_url),
                          policy=RetryPolicy(max_retries=2, base_delay=0.01))
    with pytest.raises(RunError) as exc:
        await complete_async("Hi [[answer]]", model=model)
    assert len(server.chat_requests) == 3
    assert "still failing after 3 attempts (HTTP 503): still down" in str(exc.value)
    assert exc.value.result.status == "failed"


async def test_a_drop_before_any_output_is_retried(server: FakeOpenAI) -> None:
    server.script(Reply(Drop()), Reply(Text("Second try.")))
    model = RetryingModel(openai_compatible("fake-model", server.base_url), policy=RetryPolicy(base_delay=0.01))
    run = start_run("Hi [[answer]]", model=model)
    result = await run
    assert result.status == "completed" and result.answer == "Second try."
    (retrying,) = of(run.events_so_far, "retrying")
    assert retrying.reason == "dropped connection"
    assert [r.outcome for r in server.chat_requests] == ["dropped", "completed"]


async def test_a_drop_mid_stream_fails_cleanly_keeping_the_transcript(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"})),
        Reply(Text("Dr Ada Byron leads", pieces=3), Pause(0.05), Drop()),
    )
    run = start_run(QUESTION, model=compat(server), tools=[lookup_module])
    result = await run
    events = run.events_so_far
    assert result.status == "failed"
    assert result.error is not None and "broke off mid-stream" in result.error
    shown = "".join(e.text for e in of(events, "token_delta"))
    assert shown == "Dr Ada Byron leads"
    (retracted,) = of(events, "slot_retracted")
    assert retracted.reason == "errored" and retracted.text == shown  # the widget drops the half answer
    assert result.partial["answer"] == shown
    roles = [type(m).__name__ for m in result.messages]
    assert roles[:3] == ["ModelRequest", "ModelResponse", "ModelRequest"]  # prompt, tool call, tool return kept
    assert not of(events, "retrying")  # not retried: tokens were already shown
    assert kinds(events)[-2:] == ["slot_failed", "processing_complete"]


async def test_malformed_tool_call_json_gets_a_clear_retry_prompt(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", raw='{"module_code": "PSYC6', id="bad", pieces=2)),
        Reply(Call("lookup_module", {"module_code": "PSYC605"}, id="good")),
        Reply(Text(ANSWER)),
    )
    run = start_run(QUESTION, model=compat(server), tools=[lookup_module])
    result = await run
    assert result.status == "completed" and result.answer == ANSWER
    refused = of(run.events_so_far, "tool_completed")[0]
    assert not refused.ok and "invalid arguments" in refused.result
    retry = server.chat_requests[1].messages[-1]
    assert retry["role"] == "tool" and retry["tool_call_id"] == "bad"
    assert "Invalid JSON: EOF while parsing" in retry["content"]  # says what is wrong…
    assert '{\\"module_code\\": \\"PSYC6' in retry["content"]  # …and shows what the model sent


async def test_401_fails_at_once_naming_the_key_variable_and_never_showing_the_key(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "sk-agentcell-wrong-key-8c1f2e"
    server.require_key = "sk-the-right-one-000000"
    monkeypatch.setenv("OPENAI_COMPAT_API_KEY", wrong)
    run = start_run("Hi [[answer]]", model=compat(server))
    result = await run
    assert not of(run.events_so_far, "retrying")  # at once: no back-off, no second attempt
    assert result.status == "failed" and len(server.chat_requests) == 1
    assert result.error is not None
    assert "refused the credentials (HTTP 401)" in result.error and "OPENAI_COMPAT_API_KEY" in result.error
    assert "Incorrect API key provided: ***" in result.error  # the provider's message, key masked
    # The key appears nowhere a person or a saved notebook could see it.
    seen = [result.error, result.to_json(), json.dumps([to_wire(e, t=0.0) for e in run.events_so_far], default=str),
            repr(run.events_so_far)]
    assert all(wrong not in text for text in seen)


async def test_400_fails_at_once_with_the_providers_message(server: FakeOpenAI) -> None:
    server.script(Fail(400, "max_tokens is too large: 99999999", type="invalid_request_error"))
    result = await start_run("Hi [[answer]]", model=compat(server))
    assert result.status == "failed" and len(server.chat_requests) == 1
    assert result.error is not None and "refused the request (HTTP 400): max_tokens is too large" in result.error


async def test_stop_during_a_backoff_wait_stops_at_once(server: FakeOpenAI, waits: Waits) -> None:
    server.script(Fail(429, "wait a long time", retry_after=30))
    run = start_run("Hi [[answer]]", model=compat(server))
    await eventually(lambda: of(run.events_so_far, "retrying"))
    run.cancel()
    result = await asyncio.wait_for(run.wait(), HANG_GUARD_S)
    assert (waits.asked, waits.ended) == ([30], ["cancelled"])  # Stop cut the back-off short
    assert result.status == "stopped" and len(server.chat_requests) == 1


async def test_continue_round_trips_through_the_server(server: FakeOpenAI) -> None:
    server.script(*two_rounds(), Reply(Text("Its module code is PSYC605.")))
    first = await complete_async(QUESTION, model=compat(server), tools=[lookup_module])
    openai_messages = first.to_openai()
    assert validate_chat_request({"model": "m", "messages": openai_messages}) == []

    second = await complete_async("And its code? [[answer]]", model=compat(server), history=first.messages)
    assert second.answer == "Its module code is PSYC605."
    sent = server.chat_requests[-1]
    assert not sent.problems
    assert [m["role"] for m in sent.messages] == ["user", "assistant", "tool", "assistant", "user"]

    # What `to_openai()` exports is accepted verbatim by an OpenAI client talking to the server.
    server.script(Reply(Text("ok")))
    client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    reply = await client.chat.completions.create(
        model="fake-model", messages=[*openai_messages, {"role": "user", "content": "Thanks!"}]  # type: ignore[list-item]
    )
    await client.close()
    assert reply.choices[0].message.content == "ok" and not server.chat_requests[-1].problems


async def test_a_non_streamed_request_is_retried_too(server: FakeOpenAI) -> None:
    server.script(Fail(503, "busy", retry_after=0.05), Reply(Think("hm"), Text("plain answer"), Usage(3, 2)))
    agent = Agent(RetryingModel(user_model(server)))
    result = await agent.run("Hi")
    assert result.output == "plain answer"
    assert [r.status for r in server.chat_requests] == [503, 200]
    assert not server.chat_requests[1].stream


async def test_the_server_refuses_malformed_conversations() -> None:
    assert "tool calls ['x'] at the end were not answered" in validate_chat_request({
        "model": "m",
        "messages": [{"role": "user", "content": "hi"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}],
    })
    problems = validate_chat_request({"model": "m", "messages": [{"role": "tool", "tool_call_id": "y", "content": ""}]})
    assert problems == ["messages[0]: tool_call_id 'y' answers no preceding assistant tool call"]
    assert validate_chat_request({"model": "m", "messages": [{"role": "robot", "content": "hi"}]})


async def test_provider_reported_output_tokens_past_the_ceiling_end_the_slot(server: FakeOpenAI) -> None:
    """The output-token ceiling reads the provider's usage when a response ends (issue 18): here the
    streamed deltas are few, but the server reports more output tokens than the ceiling allows."""
    from pydantic_ai.usage import UsageLimits

    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}, id="c1"), Usage(20, 60)),
        Reply(Text(ANSWER, pieces=3), Usage(40, 60)),
    )
    run = start_run(QUESTION, model=user_model(server), tools=[lookup_module],
                    limits=UsageLimits(output_tokens_limit=100))
    result = await run
    assert result.status == "budget_exhausted"
    assert result.error is not None and "output_tokens_limit of 100 (output_tokens=120)" in result.error
    assert result.usage.output_tokens == 120 and result.usage.tool_calls == 1
    server.script(*two_rounds())
    fine = await complete_async(QUESTION, model=user_model(server), tools=[lookup_module],
                                limits=UsageLimits(output_tokens_limit=23))
    assert fine.status == "completed" and fine.usage.output_tokens == 23  # at the ceiling, not past it
