"""`credentials=` and `LLM`: struckdown's way to name a model and its key, and the key kept out of sight."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

import agentcell
from agentcell.engine import complete_incremental_async
from agentcell.errors import ModelConfigError, RunError
from agentcell.events import ProcessingComplete, RunStarted
from agentcell.events.json import to_wire
from agentcell.providers import RetryingModel
from agentcell.providers.credentials import LLM, LLMCredentials, model_with_credentials
from tests.openai_server import FakeOpenAI, Reply, Text

from .conftest import KEY, journal_text
from .test_seed_examples import QUESTION, TEMPLATE


def _inner(model: Any, kind: type[Any] = OpenAIChatModel) -> Any:
    assert isinstance(model, RetryingModel)
    inner = model.wrapped
    assert isinstance(inner, kind)
    return inner


def test_repr_never_shows_the_key_or_what_a_url_hides() -> None:
    creds = LLMCredentials(api_key=KEY, base_url="https://user:secret@proxy.example:8443/v1?token=abc#x")
    assert repr(creds) == str(creds) == "LLMCredentials(api_key='***', base_url='https://proxy.example:8443/v1')"
    assert repr(LLMCredentials(api_key=None, base_url=None)) == "LLMCredentials(api_key=None, base_url=None)"


def test_defaults_come_from_struckdowns_environment_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLM_API_KEY", KEY)
    monkeypatch.setenv("LLM_API_BASE", "http://localhost:4000/v1")
    monkeypatch.setenv("DEFAULT_LLM", "openai:gpt-4o")
    creds = LLMCredentials()
    assert (creds.api_key, creds.base_url) == (KEY, "http://localhost:4000/v1")
    assert LLM().model_name == "openai:gpt-4o"
    monkeypatch.delenv("DEFAULT_LLM")
    assert LLM().model_name == "gpt-4.1-mini"


def test_a_base_url_sends_the_bare_model_name_to_that_server() -> None:
    creds = LLMCredentials(api_key=KEY, base_url="http://localhost:4000/v1")
    for name, asked in [("openai:gpt-4o-mini", "gpt-4o-mini"), ("gpt-4o-mini", "gpt-4o-mini"),
                        ("ollama:qwen3:8b", "qwen3:8b"), ("qwen3:8b", "qwen3:8b")]:
        inner = _inner(model_with_credentials(name, creds))
        assert (inner.model_name, inner.base_url, inner.client.api_key) == (asked, "http://localhost:4000/v1/", KEY)
    assert _inner(model_with_credentials(LLM(model_name="openai:gpt-4o"), creds)).model_name == "gpt-4o"
    assert _inner(model_with_credentials(None, creds)).model_name == "gpt-4.1-mini"  # struckdown's default


def test_a_key_alone_goes_to_the_provider_the_name_gives() -> None:
    creds = {"api_key": KEY}  # a mapping works too
    for name in ("openai:gpt-4o-mini", "gpt-4o-mini"):
        inner = _inner(model_with_credentials(name, creds), OpenAIResponsesModel)  # what `openai:` means today
        assert (inner.model_name, inner.client.api_key) == ("gpt-4o-mini", KEY)
        assert "api.openai.com" in inner.base_url
    with pytest.raises(ModelConfigError, match="'mistral-large' names no provider") as caught:
        model_with_credentials("mistral-large", creds)
    assert KEY not in str(caught.value)


def test_struckdowns_own_credentials_object_is_read_by_its_attributes() -> None:
    theirs = SimpleNamespace(api_key=KEY, base_url="http://localhost:4000/v1")
    assert _inner(model_with_credentials("gpt-4o-mini", theirs)).client.api_key == KEY


def test_no_credentials_leaves_the_model_as_agentcell_resolves_it() -> None:
    assert model_with_credentials("openai:gpt-4o-mini", None) == "openai:gpt-4o-mini"
    assert model_with_credentials(LLM(model_name="offline"), None) == "offline"
    assert model_with_credentials(None, LLMCredentials(api_key=None, base_url=None)) is None


def test_credentials_with_a_model_object_or_of_the_wrong_type_are_refused() -> None:
    with pytest.raises(ModelConfigError, match="credentials= applies to a model name"):
        model_with_credentials(agentcell.offline_model(), LLMCredentials(api_key=KEY, base_url=None))
    with pytest.raises(ModelConfigError, match="credentials api_key must be a string or None, not int"):
        model_with_credentials("gpt-4o-mini", {"api_key": 1234})


@pytest.mark.anyio
async def test_the_key_is_sent_and_shown_nowhere() -> None:
    with FakeOpenAI(require_key=KEY) as server:
        server.script(Reply(Text("Dr Ada Byron leads PSYC605.", pieces=3)))
        creds = LLMCredentials(api_key=KEY, base_url=server.base_url)
        seen = [e async for e in complete_incremental_async(TEMPLATE, context=QUESTION, model="openai:gpt-4o-mini",
                                                            credentials=creds)]
    (request,) = server.chat_requests
    assert request.headers["authorization"] == f"Bearer {KEY}" and request.body["model"] == "gpt-4o-mini"
    started = seen[0]
    assert isinstance(started, RunStarted) and started.model == f"openai-compat:gpt-4o-mini@{server.base_url}"
    final = seen[-1]
    assert isinstance(final, ProcessingComplete)
    result = final.result
    assert result["answer"] == "Dr Ada Byron leads PSYC605."
    shown = [repr(e) for e in seen] + [json.dumps(to_wire(e, t=0.0), default=repr) for e in seen]
    shown += [repr(result), result.to_json(), journal_text()]
    assert not [s for s in shown if KEY in s]


def test_a_refused_key_is_not_repeated_in_the_error() -> None:
    wrong = "sk-wrong-dummy-key-0000000000"
    # The server answers 401 and, like OpenAI, quotes the key it got.
    with FakeOpenAI(require_key=KEY) as server, pytest.raises(RunError) as caught:
        agentcell.complete(TEMPLATE, context=QUESTION, model="openai:gpt-4o-mini",
                           credentials=LLMCredentials(api_key=wrong, base_url=server.base_url))
    message = str(caught.value)
    assert "HTTP 401" in message and "check the api_key given in credentials=" in message
    for text in (message, repr(caught.value), repr(caught.value.result), caught.value.result.to_json(), journal_text()):
        assert wrong not in text
