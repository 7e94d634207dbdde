"""The user's own OpenAI client, and an HTTP client the wire capture cannot attach to (issue 40, item 1).

Before: `OpenAIChatModel(..., provider=OpenAIProvider(openai_client=AsyncOpenAI(base_url=..., api_key=...)))`,
the usual way to reach Azure, a proxy or a server that needs extra headers, ended every run with
`AttributeError: module 'openai' has no attribute 'AsyncByteStream'`: the wire capture took the httpx
flavour from the client class's top-level package (`openai`, where the SDK subclasses `httpx2.AsyncClient`).
A client's mounts were not wrapped, so a request through one was silently missing from the wire; a client
that was not httpx at all failed the run the same way. After: the flavour is found among the client
class's bases, every mount is wrapped too, and whatever the capture cannot attach to or record only
loses the wire: the run goes on and a warning, shown in the teaching view, says the wire was not captured.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import httpx
import httpx2
import pytest
from openai import AsyncAzureOpenAI, AsyncOpenAI
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentcell.engine import start_run
from agentcell.events.json import to_wire
from agentcell.providers import wire_capture
from agentcell.render.teaching.view import teaching_html
from tests.openai_server import FakeOpenAI, Reply, Text

pytestmark = pytest.mark.anyio
KEY = "sk-userclient-SECRET0123456789"


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as fake:
        yield fake


def _model(client: Any) -> OpenAIChatModel:
    return OpenAIChatModel("fake-model", provider=OpenAIProvider(openai_client=client))


async def _run(model: Any) -> Any:
    run = start_run("Say hi. [[answer]]", model=model, journal=False)
    result = await run
    return run, result


def _exchanges(run: Any) -> list[Any]:
    return [e for e in run.events_so_far if e.kind == "http_exchange"]


@pytest.mark.parametrize("kind", ["openai", "azure"])
async def test_a_model_on_the_users_own_client_runs_and_its_wire_is_captured(server: FakeOpenAI, kind: str) -> None:
    server.script(Reply(Text("hi there")))
    client = AsyncOpenAI(base_url=server.base_url, api_key=KEY) if kind == "openai" else AsyncAzureOpenAI(
        base_url=server.base_url, api_key=KEY, api_version="2024-06-01")
    run, result = await _run(_model(client))
    assert result.status == "completed", result.error
    assert result.answer == "hi there"
    (exchange,) = _exchanges(run)
    assert exchange.request["body"] == server.chat_requests[0].body
    assert exchange.response["status"] == 200
    wire = json.dumps([to_wire(e, t=0) for e in run.events_so_far])
    assert KEY not in wire and KEY[3:] not in wire
    assert result.warnings == ()


@pytest.mark.parametrize("flavour", [httpx2, httpx], ids=["httpx2", "httpx"])
async def test_requests_through_a_mount_of_the_users_http_client_are_captured(server: FakeOpenAI, flavour: Any) -> None:
    """A proxy, or a transport that adds the header a gateway needs, is a mount: its requests were missing.
    The OpenAI SDK takes the user's `httpx2.AsyncClient` or a legacy `httpx.AsyncClient`."""
    added: list[str] = []

    class Gateway(flavour.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self.inner = flavour.AsyncHTTPTransport()

        async def handle_async_request(self, request: Any) -> Any:
            request.headers["X-Gateway-Auth"] = "gw-SECRET-value-42"
            added.append(request.url.path)
            return await self.inner.handle_async_request(request)

        async def aclose(self) -> None:
            await self.inner.aclose()

    http = flavour.AsyncClient(mounts={"http://127.0.0.1": Gateway()})
    server.script(Reply(Text("through the gateway")))
    run, result = await _run(_model(AsyncOpenAI(base_url=server.base_url, api_key=KEY, http_client=http)))
    assert result.status == "completed", result.error
    assert added == ["/v1/chat/completions"]
    (exchange,) = _exchanges(run)
    assert exchange.response["status"] == 200
    assert server.chat_requests[0].headers["x-gateway-auth"] == "gw-SECRET-value-42"


class _NotHttpx:
    """An SDK's HTTP client that is not httpx (aiohttp-based, say): a transport and `send`, nothing the capture knows."""

    _transport = None

    async def send(self, request: Any) -> Any:
        raise AssertionError("not used: the model's requests go through the wrapped model")


class _OtherSdkModel(WrapperModel):
    """A model built on another SDK, whose client keeps that HTTP client; it answers through `wrapped`."""

    def __init__(self, wrapped: Any) -> None:
        super().__init__(wrapped)
        self.client = SimpleNamespace(_client=_NotHttpx())


async def test_a_client_the_capture_cannot_attach_to_runs_without_the_wire_and_says_so(server: FakeOpenAI) -> None:
    model = _OtherSdkModel(_model(AsyncOpenAI(base_url=server.base_url, api_key=KEY)))
    server.script(Reply(Text("still answered")), Reply(Text("again")))
    run = start_run("Say hi. [[a]] And again. [[b]]", model=model, journal=False)
    result = await run
    assert result.status == "completed", result.error
    assert _exchanges(run) == []
    (warning,) = result.warnings  # once per run, not once per slot
    assert warning.startswith("the HTTP wire was not captured (its HTTP client (")
    assert warning.endswith("test_user_client._NotHttpx) is not an async httpx client); the run goes on without it")
    assert "the HTTP wire was not captured" in teaching_html(run.transcript)


async def test_an_exchange_that_cannot_be_recorded_still_goes_through(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise ValueError("cannot read this body")

    monkeypatch.setattr(wire_capture, "_events", broken)
    server.script(Reply(Text("answered")))
    run, result = await _run(_model(AsyncOpenAI(base_url=server.base_url, api_key=KEY)))
    assert result.status == "completed", result.error
    assert result.answer == "answered"
    assert _exchanges(run) == []
    assert result.warnings == (
        "an HTTP exchange was not captured (ValueError: cannot read this body); the request went through",
    )
