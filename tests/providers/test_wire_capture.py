"""The HTTP exchanges of the teaching view's wire, captured through the real OpenAI client (what the teaching view shows).

The scripted server on 127.0.0.1 answers like Ollama or vLLM; the capture must show the body exactly as
sent and the events as received, and no credential may reach an event.
"""

from __future__ import annotations

import json

import pytest
from pydantic_ai import Agent

from agentcell.engine import start_run
from agentcell.events.json import to_wire
from agentcell.providers import RetryingModel, RetryPolicy
from agentcell.providers.wire_capture import REDACTED, install
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


def test_a_long_string_anywhere_in_a_body_is_seen_without_a_walk() -> None:
    """`_may_hold_long` is checked in C on the body's text; it must never miss a string `_clip` would clip
    (escaped quotes and backslashes included), and a body of short strings, however long, needs no walk."""
    import random

    from agentcell.providers import wire_capture as wc

    rng = random.Random(7)
    alphabet = ['a', ' ', '"', '\\', '\n', 'é', '🎉', '{', '}', '\\"', '\\\\']
    for _ in range(300):
        n = rng.choice([10, 200, wc.MAX_STRING - 2, wc.MAX_STRING, wc.MAX_STRING + 1, wc.MAX_STRING * 2])
        long = "".join(rng.choice(alphabet) for _ in range(n))
        body = {"messages": [{"role": "user", "content": "x" * rng.randrange(50)},
                             {"role": "tool", "content": long, "args": [1, 2, {"k": long[: n // 2]}]}]}
        for text in (json.dumps(body), json.dumps(body, ensure_ascii=False), json.dumps(body, indent=1)):
            if wc._clip(body) != body:  # something is clipped: the check must say so
                assert wc._may_hold_long(text), n
    many_short = json.dumps({"messages": [{"role": "tool", "content": "y" * 1_000} for _ in range(200)]})
    assert not wc._may_hold_long(many_short)
    assert wc._may_hold_long(json.dumps({"a": 'q"' * wc.MAX_STRING}))


async def test_a_long_conversation_is_not_walked_per_request(server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each request's body holds the whole conversation: clipping it by a walk in Python on every
    request cost O(conversation) calls a round. Short strings only: no walk; the environment's secrets
    are read once per run, not per request."""
    from agentcell.providers import secrets, wire_capture

    walks: list[object] = []
    original = wire_capture._clip
    monkeypatch.setattr(wire_capture, "_clip", lambda value: (walks.append(value), original(value))[1])
    env_reads: list[int] = []
    original_env = secrets.env_secrets
    monkeypatch.setattr(wire_capture, "env_secrets", lambda: (env_reads.append(1), original_env())[1])
    rounds = 6
    server.script(*[Reply(Call("lookup_module", {"module_code": f"M{i}"}, id=f"c{i}")) for i in range(rounds)],
                  Reply(Text("done")))
    run = start_run("Go [[answer|use_tools=true]]", model=user_model(server, api_key=KEY), tools=[lookup_module],
                    journal=False)
    result = await run
    assert result.status == "completed", result.error
    assert len(of(run.events_so_far, "http_exchange")) == rounds + 1
    request_walks = [w for w in walks if isinstance(w, dict) and "messages" in w]
    assert request_walks == [] and len(env_reads) == 1, (len(request_walks), len(env_reads))
