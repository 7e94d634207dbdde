"""Credentials in custom headers and JSON-escaped keys never reach the wire view (issue 40, item 3).

Before: only a fixed list of header names (`Authorization`, `api-key`, `x-api-key`, …) was redacted, and
the other header values skipped the secret masker, so a gateway's `Helicone-Auth: Bearer …`,
`X-Litellm-Api-Key`, `X-Custom-Auth` or the SDK's `OpenAI-Organization` reached the journal, the saved
transcript and the exported lesson verbatim. A key a server quoted JSON-escaped (`"\\u0073\\u006b-…"`)
was masked in the run's error line but not in the wire view, which masked the body's text before
parsing it. After: every header whose name looks like a credential is redacted, every other header value
goes through the masker with those credentials added, and escaped JSON is masked again once parsed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentcell.engine import start_run
from agentcell.events.json import to_wire
from agentcell.providers.known_secrets import secret_header
from agentcell.providers.wire_capture import REDACTED
from agentcell.render.lesson import lesson_html
from tests.openai_server import FakeOpenAI, Reply, Text

pytestmark = pytest.mark.anyio
KEY = "sk-headers-SECRET0123456789"
CUSTOM = {
    "Helicone-Auth": "Bearer hel-ONE-secret-value",
    "X-Litellm-Api-Key": "litellm-TWO-secret-value",
    "X-Custom-Auth": "custom-THREE-secret-value",
    "X-Session-Id": "sess-FOUR-secret-value",
}
ORG = "org-FIVE-secret-value"


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as fake:
        yield fake


def _saved(run: Any, result: Any, journal: Path) -> str:
    """Everything a person or a file gets to see of the run."""
    return "\n".join([
        (journal / f"{run.run_id}.jsonl").read_text(),
        result.to_json(),
        json.dumps([to_wire(e, t=0) for e in run.events_so_far], ensure_ascii=False),
        lesson_html([("r", run.transcript)]),
    ])


async def test_custom_credential_headers_are_redacted_everywhere(server: FakeOpenAI, tmp_path: Path) -> None:
    headers = {**CUSTOM, "OpenAI-Organization": ORG, "X-Trace": f"echo of {CUSTOM['X-Custom-Auth']}"}
    http = httpx2.AsyncClient(headers=headers)  # a gateway's headers, on the user's HTTP client
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=server.base_url, api_key=KEY, http_client=http))
    server.script(Reply(Text("fine")))
    run = start_run("Hi [[answer]]", model=model, journal=tmp_path)
    result = await run
    assert result.status == "completed", result.error
    assert server.chat_requests[0].headers["helicone-auth"] == CUSTOM["Helicone-Auth"]  # they were sent
    (exchange,) = [e for e in run.events_so_far if e.kind == "http_exchange"]
    sent = {k.lower(): v for k, v in exchange.request["headers"].items()}
    for name in [*CUSTOM, "OpenAI-Organization", "Authorization"]:
        assert sent[name.lower()] == REDACTED, name
    assert sent["x-trace"] == "echo of ***"  # a value that repeats a credential is masked, not dropped
    saved = _saved(run, result, tmp_path)
    for secret in [*CUSTOM.values(), ORG, KEY]:
        assert secret.split(" ")[-1] not in saved, secret


async def test_a_key_quoted_json_escaped_in_a_response_is_masked_in_the_wire_view(tmp_path: Path) -> None:
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)

    def refuse(request: httpx2.Request) -> httpx2.Response:
        body = '{"error": {"message": "Incorrect API key provided: ' + escaped + '", "type": "invalid_request_error"}}'
        return httpx2.Response(401, content=body.encode(), headers={"content-type": "application/json"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(refuse))
    provider = OpenAIProvider(base_url="http://gateway.test/v1", api_key=KEY, http_client=http)
    model = OpenAIChatModel("fake-model", provider=provider)
    run = start_run("Hi [[answer]]", model=model, journal=tmp_path)
    result = await run
    assert result.status == "failed"
    (exchange,) = [e for e in run.events_so_far if e.kind == "http_exchange"]
    assert exchange.response["body"]["error"]["message"] == "Incorrect API key provided: ***"
    saved = _saved(run, result, tmp_path)
    assert KEY not in saved and KEY[3:] not in saved and escaped not in saved


@pytest.mark.parametrize(
    ("name", "secret"),
    [("Authorization", True), ("Proxy-Authorization", True), ("Helicone-Auth", True), ("X-Litellm-Api-Key", True),
     ("OpenAI-Organization", True), ("OpenAI-Project", True), ("X-Goog-Api-Key", True), ("Set-Cookie", True),
     ("X-Amz-Security-Token", True), ("X-Client-Secret", True), ("Anthropic-Organization-Id", True),
     ("Content-Type", False), ("X-Request-Id", False), ("x-ratelimit-remaining-tokens", False),
     ("anthropic-ratelimit-tokens-limit", False), ("Keep-Alive", False), ("Openai-Processing-Ms", False)],
)
def test_which_header_names_are_credentials(name: str, secret: bool) -> None:
    assert secret_header(name) is secret


async def test_a_short_value_of_a_credential_named_header_does_not_mask_the_body(server: FakeOpenAI) -> None:
    """`X-Auth-Required: true` is no secret: masking every `true` would garble the body's JSON."""
    http = httpx2.AsyncClient(headers={"X-Auth-Required": "true"})
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=server.base_url, api_key=KEY, http_client=http))
    server.script(Reply(Text("fine")))
    run = start_run("Hi [[answer]]", model=model, journal=False)
    assert (await run).status == "completed"
    (exchange,) = [e for e in run.events_so_far if e.kind == "http_exchange"]
    assert exchange.request["body"] == server.chat_requests[0].body
    assert exchange.request["headers"]["x-auth-required"] == REDACTED


@pytest.mark.parametrize(
    ("body", "walked"),
    [(r'{"m": "\u0073\u006b-abc"}', True), (r'{"u": "http:\/\/user:pw@host"}', True),
     (r'{"m": "h\u00e9llo \ud83c\udf89"}', False), ('{"m": "plain"}', False)],
    ids=["ascii-escapes", "escaped-slash", "non-english", "plain"],
)
def test_only_a_body_that_spells_ascii_as_escapes_is_masked_again_after_parsing(body: str, walked: bool) -> None:
    """A non-English conversation, escaped by the SDK's `ensure_ascii`, is not walked on every request."""
    from agentcell.providers import wire_capture

    assert wire_capture._escaped(body) is walked
