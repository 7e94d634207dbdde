"""The HTTP exchanges of the teaching view's wire, captured through the real OpenAI client (SPEC §5 teaching view).

The scripted server on 127.0.0.1 answers like Ollama or vLLM; the capture must show the body exactly as
sent and the events as received, and no credential may reach an event.
"""

from __future__ import annotations

import json

import pytest
from pydantic_ai import Agent

from agentcell.engine import start_run
from agentcell.providers import RetryingModel, RetryPolicy
from agentcell.providers.wire_capture import REDACTED, install
from agentcell.wire import to_wire
from tests.openai_server import Call, Fail, FakeOpenAI, Reply, Text, Usage

from .conftest import lookup_module, of, user_model

pytestmark = pytest.mark.anyio
KEY = "sk-wire-TESTKEY0123456789"


async def test_each_request_is_captured_as_sent_with_the_key_redacted(server: FakeOpenAI) -> None:
    server.script(
        Reply(Call("lookup_module", {"module_code": "PSYC605"}, id="c1"), Usage(20, 5)),
        Fail(429, "slow down", retry_after=0.05),
        Reply(Text("Dr Ada Byron.", pieces=3), Usage(30, 4)),
    )
    model = RetryingModel(user_model(server, api_key=KEY), policy=RetryPolicy(base_delay=0.01))
    run = start_run("Who leads PSYC605? [[answer|use_tools=true]]", model=model, tools=[lookup_module],
                    journal=False)
    result = await run
    assert result.status == "completed"
    exchanges = of(run.events_so_far, "http_exchange")
    assert [x.response["status"] for x in exchanges] == [200, 429, 200]
    # The body is what the server received, byte for byte once parsed.
    assert [x.request["body"] for x in exchanges] == [r.body for r in server.chat_requests]
    assert all(x.request["headers"]["authorization"] == REDACTED for x in exchanges)
    assert exchanges[1].response["body"]["error"]["message"] == "slow down"
    streamed = exchanges[2].response["events"]
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in streamed if isinstance(e, dict)
                   and e.get("choices")) == "Dr Ada Byron."
    wire = json.dumps([to_wire(e, t=0) for e in run.events_so_far])
    assert KEY not in wire and KEY[3:] not in wire
    assert {x.slot for x in exchanges} == {"answer"}


async def test_outside_a_run_the_transport_only_passes_requests_through(server: FakeOpenAI) -> None:
    model = user_model(server)
    assert install(model) and install(model)  # idempotent: wrapped once
    server.script(Reply(Text("plain"), Usage(3, 1)))
    result = await Agent(model).run("hi")
    assert result.output == "plain"
    assert len(server.chat_requests) == 1


async def test_a_long_stream_keeps_its_first_and_last_events(server: FakeOpenAI) -> None:
    server.script(Reply(Text("word " * 200, pieces=200), Usage(3, 200)))
    run = start_run("Say it. [[answer]]", model=user_model(server), journal=False)
    await run
    (exchange,) = of(run.events_so_far, "http_exchange")
    got = exchange.response
    assert got["events_total"] > 200 and len(got["events"]) == 24 + 1 + 8
    assert got["events"][24] == f"… {got['events_total'] - 32} more events …"
