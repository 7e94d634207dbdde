"""What local OpenAI-compatible servers (llama.cpp's, Ollama, vLLM) do differently, on the scripted server:
no usage, streams cut off with no finish reason, tool calls only without streaming, `max_tokens` only."""

from __future__ import annotations

from typing import Any

import pytest

from agentcell.engine import answer_checks, start_run
from agentcell.providers.models import resolve_model
from tests.openai_server import Call, Cut, FakeOpenAI, NoUsage, Reply, Text

from .conftest import lookup_module

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answer_checks, "BASE_DELAY_S", 0.0)


def compat(server: FakeOpenAI) -> str:
    return f"openai-compat:smol@{server.base_url}"


async def test_a_response_without_usage_is_counted_here_and_marked_estimated(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Hello there, how are you today?", pieces=3), NoUsage()))
    run = start_run("Say hello. [[answer]]", model=compat(server), journal=False)
    result = await run
    assert result.status == "completed", result.error
    assert result.usage.estimated and result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    rows = [e for e in run.events_so_far if e.kind == "request_completed"]
    assert [r.usage.estimated for r in rows] == [True]
    assert [e.usage.estimated for e in run.events_so_far if e.kind == "usage_updated"][-1] is True


async def test_reported_usage_is_not_marked_estimated(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Hello.")))
    result = await start_run("Say hello. [[answer]]", model=compat(server), journal=False)
    assert result.usage.output_tokens > 0 and not result.usage.estimated


async def test_a_cut_off_answer_is_asked_for_again_and_its_text_withdrawn(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Once upon a"), Cut()), Reply(Text("Once upon a time, the end.")))
    run = start_run("Tell a story. [[answer]]", model=compat(server), journal=False)
    result = await run
    assert result.status == "completed", result.error
    assert result["answer"] == "Once upon a time, the end."
    retrying = [e for e in run.events_so_far if e.kind == "retrying"]
    assert [(e.attempt, e.reason) for e in retrying] == [(1, "answer cut off")]
    assert [e.text for e in run.events_so_far if e.kind == "slot_retracted"] == ["Once upon a"]
    assert len(server.chat_requests) == 2 and result.usage.requests == 2


async def test_answers_cut_off_every_time_fail_with_the_reason_not_the_budget(server: FakeOpenAI) -> None:
    server.script(*[Reply(Text("Once upon"), Cut()) for _ in range(answer_checks.ANSWER_RETRIES + 1)])
    result = await start_run("Tell a story. [[answer]]", model=compat(server), journal=False)
    assert result.status == "failed"
    assert result.error is not None and "cut the answer off" in result.error and "budget" not in result.error
    assert len(server.chat_requests) == answer_checks.ANSWER_RETRIES + 1


async def test_a_slot_max_tokens_reaches_the_server_as_max_tokens(server: FakeOpenAI) -> None:
    server.script(Reply(Text("Hi.")))
    result = await start_run("Say hi. [[answer|max_tokens=5]]", model=compat(server), journal=False)
    assert result.status == "completed", result.error
    (request,) = server.chat_requests
    assert request.body.get("max_tokens") == 5 and "max_completion_tokens" not in request.body


async def test_openai_chat_at_a_local_base_url_needs_no_key(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.script(Reply(Text("Hi.")))
    result = await start_run("Say hi. [[answer|max_tokens=7]]", model=resolve_model("openai-chat:smol").model,
                             journal=False)
    assert result.status == "completed", result.error
    assert server.chat_requests[0].body.get("max_tokens") == 7


async def test_tool_rounds_go_unstreamed_when_the_server_streams_nothing_for_them() -> None:
    """llama.cpp's function-calling format answers a streamed request with tools with nothing, and an unstreamed
    one with the call."""

    def llama_like(body: dict[str, Any]) -> Reply:
        if body.get("tools") and body.get("stream"):
            return Reply()  # the role chunk, then the end: no text, no call
        if not any(m.get("role") == "tool" for m in body["messages"]):
            return Reply(Call("lookup_module", {"module_code": "PSYC605"}))
        return Reply(Text("Dr Ada Byron leads it."))

    with FakeOpenAI(default=llama_like) as server:
        run = start_run("Who leads PSYC605? [[answer|use_tools]]", model=compat(server), tools=[lookup_module],
                        journal=False)
        result = await run
        assert result.status == "completed", result.error
        assert result["answer"] == "Dr Ada Byron leads it."
        assert result.usage.tool_calls == 1
        streamed = [bool(r.body.get("stream")) for r in server.chat_requests]
        assert streamed == [True, False, False]
        (warning,) = result.warnings
        assert "without streaming" in warning
        # The call's response went back to the server with `content: ""`, which llama.cpp's server requires.
        sent_back = [m for m in server.chat_requests[-1].body["messages"] if m.get("tool_calls")]
        assert [m.get("content") for m in sent_back] == [""]


async def test_after_a_cut_off_a_batch_sends_the_server_one_request_at_a_time() -> None:
    """llama.cpp's server serves one request at a time and cuts the stream it writes when another waits; once
    a row saw that, the batch's rows queue for the server instead of cutting each other off."""
    import agentcell

    server = FakeOpenAI()
    waiting: list[int] = []
    """For each request as it arrives: how many other responses the server is still writing."""

    def one_at_a_time(body: dict[str, Any]) -> Reply:
        waiting.append(sum(1 for r in server.chat_requests[:-1] if r.outcome == "pending"))
        if len(waiting) == 1:
            return Reply(Text("Once"), Cut())
        return Reply(Text("A whole answer, slowly.", pieces=4, delay=0.01))

    server.default = one_at_a_time
    with server:
        batch = agentcell.map("About {{ item }}. [[answer]]", [f"row {i}" for i in range(9)], concurrency=3,
                              model=compat(server), journal=False)
        result = await batch
    assert result.counts == {"completed": 9}
    assert len(waiting) == 10
    # The first wave overlapped (and cut one answer off); the rows started after it waited their turn.
    assert max(waiting[:4]) > 0 and waiting[5:] == [0] * 5
