"""Credentials in a base URL never reach a surface.

Before: `openai-compat:m@http://host/v1?api_key=sk-…` showed the key in the model name, hence in
`RunStarted`, the widget, the static HTML, the journal and `to_json`; with `user:pass@host` the server's
echo of the refused `Authorization: Basic …` header put the password (base64) in the error, and so in
every surface too. After: key-like query values and userinfo are masked in display names, and auth
headers, URLs and known credentials in every error text.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from agentcell.engine import start_run
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.providers.secrets import mask_secrets, safe_url
from tests.openai_server import FakeOpenAI, Reply, Text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("http://h:1/v1?api_key=sk-abc123456789", "http://h:1/v1?api_key=***"),
        ("http://h/v1?model=x&access_token=abc&X-Amz-Signature=ff", "http://h/v1?model=x&access_token=***&X-Amz-Signature=***"),
        ("http://alice:hunter2@h:8080/v1", "http://h:8080/v1"),
        ("http://h/cb#id_token=abc&state=1", "http://h/cb#id_token=***&state=1"),
        ("http://localhost:11434/v1?stream=true", "http://localhost:11434/v1?stream=true"),
    ],
    ids=["api_key", "token-and-signature", "userinfo", "fragment", "harmless"],
)
def test_safe_url(url: str, safe: str) -> None:
    assert safe_url(url) == safe


def test_mask_secrets_masks_echoed_auth_headers_and_urls() -> None:
    said = "refused Basic YWxpY2U6aHVudGVyMg== and Bearer abc.def-123 for http://u:p@h/v1?key=zzzz"
    assert mask_secrets(said) == "refused Basic *** and Bearer *** for http://h/v1?key=***"


class Captured(AgentWidget):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent: list[Any] = []

    def send(self, content: Any, buffers: Any = None) -> None:
        self.sent.append(content)


async def _surfaces(model: str, tmp_path: Path) -> tuple[Any, str]:
    run = start_run("Hi\n[[a]]", model=model, journal=tmp_path)
    result = await run.wait()
    widget = Captured()
    for event in run.events_so_far:
        widget.apply(event)
    html, _ = widget.static_bundle()
    seen = "\n".join(
        [
            (tmp_path / f"{run.run_id}.jsonl").read_text(),
            result.to_json(),
            json.dumps(widget.sent),
            json.dumps(widget.final),
            json.dumps(html),
            repr(run.events_so_far),
        ]
    )
    return result, seen


async def test_key_in_the_base_url_query_is_masked_everywhere(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(Reply(Text("hi")))
        host = server.base_url.split("://", 1)[1]
        result, seen = await _surfaces(f"openai-compat:fake-model@http://{host}?api_key=sk-topSECRETvalue1", tmp_path)
    assert result.model == f"openai-compat:fake-model@http://{host}?api_key=***"
    assert "topSECRETvalue1" not in seen


async def test_password_echoed_in_an_auth_header_is_masked_everywhere(tmp_path: Path) -> None:
    with FakeOpenAI(require_key="the-right-key") as server:
        host = server.base_url.split("://", 1)[1]
        result, seen = await _surfaces(f"openai-compat:fake-model@http://alice:hunter2pass@{host}", tmp_path)
    assert result.status == "failed"
    assert "Incorrect API key provided: Basic ***." in (result.error or "")
    encoded = base64.b64encode(b"alice:hunter2pass").decode()
    for secret in ("hunter2pass", encoded, encoded.rstrip("=")):
        assert secret not in seen


def test_masking_only_where_a_pattern_can_match_masks_exactly_what_every_pattern_would() -> None:
    """`mask_secrets` runs each pattern only where its literal part occurs (a request body holds the whole
    conversation, and three regex scans of it per request were most of the teaching view's cost): the
    result must be the one of running every pattern on every text."""
    import random

    from agentcell.providers import secrets

    def every_pattern(text: str) -> str:
        text = secrets._URL.sub(lambda m: secrets.safe_url(m.group(0)), text)
        text = secrets._AUTH.sub(rf"\1\2{secrets.MASK}", text)
        return secrets._KEYLIKE.sub(lambda m: f"{m.group(1)}-{secrets.MASK}", text)

    pieces = ["https://u:pw@host/x?api_key=abc123456&q=1", "Bearer abcdEFGH1234", "Basic dXNlcjpwYXNz", "Token%20zzzz9999",
              "sk-abcdefgh12345678", "gsk_ABCDEFGH12345678", "key-0123456789ab", "xai-short", "pk_", "rk-1234567",
              "://", "Negotiate  x", "keys", "basic", " ", "\n", '"', "é🎉", "ftp://a.b/c", "skate-board-12345678"]
    rng = random.Random(11)
    for _ in range(2_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 8)))
        assert secrets.mask_secrets(text, env=[]) == every_pattern(text), text
