"""Model resolution, retry policy, credential masking, the offline default and the magic flags."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from traitlets.config import Config

from agentcell.engine import start_run
from agentcell.errors import ModelConfigError
from agentcell.providers import RecordingModel, ReplayModel, RetryingModel, RetryPolicy, mask_secrets
from agentcell.providers.models import OFFLINE_DELAYS, resolve_model
from agentcell.result import RunResult
from tests.openai_server import FakeOpenAI

from .conftest import kinds, lookup_module, of, user_model

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AGENTCELL_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_COMPAT_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_resolution_order_explicit_then_env_then_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model(None).name == "offline" and resolve_model(None).offline
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:slow")
    assert resolve_model(None).name == "offline:slow"
    assert resolve_model("offline:fast").name == "offline:fast"  # the flag (or config) wins over the env


def test_openai_compat_strings_build_a_real_openai_model_with_retries() -> None:
    resolved = resolve_model("openai-compat:qwen3:8b@http://user:hunter22@localhost:11434/v1")
    assert isinstance(resolved.model, RetryingModel)
    inner = resolved.model.wrapped
    assert isinstance(inner, OpenAIChatModel) and inner.model_name == "qwen3:8b"
    assert inner.base_url.startswith("http://user:hunter22@localhost:11434/v1")
    assert resolved.name == "openai-compat:qwen3:8b@http://localhost:11434/v1"  # no password in the name
    assert resolved.model.key_var == "OPENAI_COMPAT_API_KEY" and not resolved.offline
    with pytest.raises(ModelConfigError, match="openai-compat:MODEL@BASE_URL"):
        resolve_model("openai-compat:qwen3")
    with pytest.raises(ModelConfigError, match="must look like http://host:port/v1"):
        resolve_model("openai-compat:qwen3@localhost")


def test_a_missing_key_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelConfigError, match="needs the environment variable ANTHROPIC_API_KEY"):
        resolve_model("anthropic:claude-sonnet-4-5")
    with pytest.raises(ModelConfigError, match=r"needs the environment variable OPENAI_API_KEY.*not %env"):
        resolve_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # a local server needs no key
    resolved = resolve_model("openai:gpt-4o-mini")
    assert isinstance(resolved.model, RetryingModel) and resolved.model.key_var == "OPENAI_API_KEY"


def test_model_objects_get_retries_but_test_models_do_not(server: FakeOpenAI) -> None:
    resolved = resolve_model(user_model(server))
    assert isinstance(resolved.model, RetryingModel)
    assert resolved.name == f"openai-compat:fake-model@{server.base_url}"
    assert resolve_model(resolved.model).model is resolved.model  # never wrapped twice
    function = FunctionModel(lambda m, i: None)  # type: ignore[arg-type, return-value]
    assert resolve_model(function).model is function
    from pydantic_ai.models.test import TestModel

    test = TestModel()
    assert resolve_model(test).model is test


def test_a_run_does_not_import_pydantic_ais_test_model() -> None:
    """`TestModel` is recognised without importing its module (0.7 MB of RSS a run would keep for nothing)."""
    code = (
        "import asyncio, sys\n"
        "from pydantic_ai.models.function import FunctionModel\n"
        "from agentcell.engine import start_run\n"
        "from agentcell.template import compile_template\n"
        "async def fn(_m, _i):\n"
        "    yield 'hi'\n"
        "async def main():\n"
        "    return await start_run(compile_template('Go [[answer]]'), model=FunctionModel(stream_function=fn), journal=False)\n"
        "assert asyncio.run(main()).answer == 'hi'\n"
        "print('pydantic_ai.models.test' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_retry_policy_backs_off_exponentially_with_bounded_jitter() -> None:
    policy = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=3.0, jitter=0.25)
    rng = random.Random(7)
    delays = [policy.delay(n, None, rng) for n in (1, 2, 3)]
    assert 0.75 <= delays[0] <= 1.25 and 1.5 <= delays[1] <= 2.5 and 2.25 <= delays[2] <= 3.75  # capped at 3 ± 25 %
    assert policy.delay(4, None, rng) is None  # bounded
    assert policy.delay(1, 2.0, rng) == 2.0  # Retry-After is honoured exactly
    assert policy.delay(1, 500.0, rng) is None  # …unless it asks for an unreasonable wait


def test_mask_secrets_hides_env_keys_and_key_shaped_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", "plain-value-123")
    text = "sent plain-value-123 and sk-proj-abcdefghijklmnop and key-1234567890ab"
    assert mask_secrets(text) == "sent *** and sk-*** and key-***"


async def test_the_offline_default_is_deterministic_labelled_and_shows_everything() -> None:
    async def once() -> tuple[RunResult, list[str], list[object]]:
        run = start_run("Who leads PSYC605? [[answer|use_tools=true]]", model="offline:fast", tools=[lookup_module])
        result = await run
        events = run.events_so_far
        return result, kinds(events, collapse=True), [e for e in events if e.kind in ("token_delta", "tool_started")]

    first, first_kinds, _ = await once()
    second, second_kinds, _ = await once()
    assert first.answer == second.answer and first_kinds == second_kinds
    assert first_kinds[:4] == ["run_started", "slot_started", "model_request", "thinking_delta"]
    assert {"tool_started", "tool_completed", "token_delta", "slot_completed"} <= set(first_kinds)
    assert str(first.answer).startswith("This answer comes from agentcell's offline model")
    assert "It read your prompt: “Who leads PSYC605?”." in str(first.answer)
    assert "The tool `lookup_module` returned: “Cognition and Emotion, led by Dr Ada Byron”." in str(first.answer)



async def test_no_model_anywhere_means_the_offline_default_announced_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(OFFLINE_DELAYS, "", 0.0)
    run = start_run("Hi [[answer]]")
    await run
    (started,) = of(run.events_so_far, "run_started")
    assert started.offline is True and started.model == "offline"


def test_cassette_models_keep_their_names_and_the_offline_label(tmp_path: Path) -> None:
    from agentcell.providers.models import record

    recording = record(tmp_path / "c.json", "offline:fast")
    assert isinstance(recording, RecordingModel)
    resolved = resolve_model(recording)
    assert resolved.name == "offline:fast" and resolved.offline and resolved.model is recording


# ---- the magic's --record / --replay -----------------------------------------------------------


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.run_cell(
        "from agentcell import readonly\n"
        "@readonly\n"
        "def lookup(code: str) -> str:\n"
        "    '''Look a module up by its code.'''\n"
        "    return f'{code}: led by Ada'\n"
    )
    yield shell


def test_record_then_replay_from_the_magic(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCELL_REPLAY_DELAY", "0")
    cassette = tmp_path / "workshop.json"
    cell = "Who leads PSYC605?\n[[answer|use_tools=true]]"
    ip.run_cell_magic("agent", f"-o first --record {cassette}", cell)
    assert json.loads(cassette.read_text())["agentcell_cassette"] == 1
    ip.run_cell_magic("agent", f"-o again --replay {cassette}", cell)
    first, again = ip.user_ns["first"], ip.user_ns["again"]
    assert again.status == "completed" and again.answer == first.answer
    assert again.model == "replay:offline:fast"
    spec = ip.find_cell_magic("agent").__self__.prepare(f"--replay {cassette}", cell)
    assert isinstance(spec.options.model, ReplayModel) and spec.replay == str(cassette)


def test_replaying_a_missing_cassette_is_a_usage_error(ip: InteractiveShell, tmp_path: Path) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="no cassette at"):
        ip.run_cell_magic("agent", f"--replay {tmp_path / 'missing.json'}", "Hi [[answer]]")


async def test_openai_model_at_a_chat_only_server_uses_chat_completions(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.openai_server import Reply, Text

    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # e.g. Ollama, vLLM: no Responses API, no key
    server.script(Reply(Text("Hello from a local server")))
    resolved = resolve_model("openai:qwen3:8b")
    result = await start_run("Hi [[answer]]", model=resolved.model)
    assert result.status == "completed" and result.answer == "Hello from a local server"
    assert [r.path for r in server.chat_requests] == ["/v1/chat/completions"]
