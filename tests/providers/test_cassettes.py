"""Record and replay: a fixture-server run recorded to a cassette replays with no server at all."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentcell.engine import start_run
from agentcell.errors import ModelConfigError
from agentcell.frontends.jupyter.cell import cassette_model
from agentcell.providers import CASSETTE_VERSION, Cassette, ReplayModel, replay
from agentcell.providers import cassette as cassette_module
from agentcell.providers.models import record
from tests.openai_server import Call, Fail, FakeOpenAI, Reply, Text, Think, Usage

from .conftest import kinds, lookup_module, of

pytestmark = pytest.mark.anyio

TEMPLATE = "Who leads PSYC605? [[answer|use_tools=true]]\n\nHow sure are you, 1-10? [[int:confidence]]"
ANSWER = "PSYC605 is led by Dr Ada Byron."


def script(server: FakeOpenAI) -> None:
    server.script(
        Fail(429, "busy", retry_after=0.05),  # retried while recording; the cassette holds only the answer
        Reply(Think("Look it up first."), Call("lookup_module", {"module_code": "PSYC605"}, id="c1", pieces=3),
              Usage(30, 8)),
        Reply(Think("Now I know."), Text(ANSWER, pieces=5), Usage(50, 9)),
        Reply(Call("final_result", {"response": 9}, id="c2"), Usage(70, 4)),
    )


async def record_run(tmp_path: Path) -> tuple[Path, object, list[str]]:
    path = tmp_path / "run.cassette.json"
    with FakeOpenAI() as server:
        script(server)
        run = start_run(TEMPLATE, model=record(path, f"openai-compat:fake-model@{server.base_url}"),
                        tools=[lookup_module])
        result = await run
        assert result.status == "completed", result.error
        assert of(run.events_so_far, "retrying")
    return path, result, kinds(run.events_so_far, collapse=True, skip=("retrying", "http_exchange"))  # no wire on replay


async def test_a_recorded_run_replays_with_no_server(tmp_path: Path) -> None:
    path, recorded, recorded_kinds = await record_run(tmp_path)  # the server is closed from here on

    run = start_run(TEMPLATE, model=replay(path, delay=0), tools=[lookup_module])
    result = await run
    assert result.status == "completed", result.error
    assert result.results == recorded.results == {"answer": ANSWER, "confidence": 9}  # type: ignore[attr-defined]
    assert result.usage == recorded.usage  # type: ignore[attr-defined]
    assert kinds(run.events_so_far, collapse=True) == recorded_kinds
    assert "".join(e.text for e in of(run.events_so_far, "token_delta")) == ANSWER
    assert "".join(e.text for e in of(run.events_so_far, "thinking_delta")) == "Look it up first.Now I know."
    assert run.events_so_far[0].model.startswith("replay:openai-compat:fake-model@http://127.0.0.1:")


async def test_the_cassette_is_versioned_readable_json_with_tool_results(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    data = json.loads(path.read_text())
    assert data["agentcell_cassette"] == CASSETTE_VERSION == 1
    assert data["model"].startswith("openai-compat:fake-model@")
    steps = [(i["slot"], i["request"]) for i in data["interactions"]]
    assert steps == [("answer", 1), ("answer", 2), ("confidence", 1)]
    first, second, _ = data["interactions"]
    assert first["sent"] == [{"kind": "prompt", "content": "Who leads PSYC605?"}]
    assert second["sent"] == [{"kind": "tool_return", "tool": "lookup_module",
                               "content": "Cognition and Emotion, led by Dr Ada Byron"}]
    kinds_of_parts = [p["part_kind"] for p in first["response"]["parts"]]
    assert kinds_of_parts == ["thinking", "tool-call"]
    assert path.read_text().count("\n") > 50  # indented, one field a line: diffable and hand-editable


async def test_replay_streams_at_a_readable_pace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pace comes from waiting `delay` before each streamed word (observed as the sleeps asked for)."""
    path, _, _ = await record_run(tmp_path)
    asked: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        asked.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(cassette_module, "asyncio", SimpleNamespace(sleep=sleep))
    result = await start_run(TEMPLATE, model=replay(path, delay=0.01), tools=[lookup_module])
    words = len(ANSWER.split()) + len(["Look", "it", "up", "first.", "Now", "I", "know."])
    assert result.status == "completed"
    assert asked == [0.01] * words  # one wait per word of text and thinking; none for tool calls


async def test_a_diverging_prompt_says_where(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    other = TEMPLATE.replace("PSYC605", "PSYC606")
    result = await start_run(other, model=replay(path, delay=0), tools=[lookup_module])
    assert result.status == "failed"
    assert result.error is not None and result.error.startswith("ReplayDivergence: replay of ")
    assert "diverged at slot 'answer', request 1: prompt #1 content was 'Who leads PSYC605?' when recorded, " \
           "now 'Who leads PSYC606?'" in result.error


async def test_a_diverging_tool_result_says_where_unless_loose(tmp_path: Path) -> None:
    path, recorded, _ = await record_run(tmp_path)

    def lookup_module(module_code: str) -> str:
        """Look a module up by its code. Returns its title and who leads it."""
        return "moved to Dr Grace Hopper"

    result = await start_run(TEMPLATE, model=replay(path, delay=0), tools=[lookup_module])
    assert result.error is not None
    assert "slot 'answer', request 2: tool_return #1 (tool `lookup_module`) content was 'Cognition" in result.error

    loose = await start_run(TEMPLATE, model=replay(path, delay=0, match="loose"), tools=[lookup_module])
    assert loose.status == "completed" and loose.results == recorded.results  # type: ignore[attr-defined]


async def test_asking_for_more_than_was_recorded_says_so(tmp_path: Path) -> None:
    path, _, _ = await record_run(tmp_path)
    cassette = Cassette.load(path)
    cassette.interactions = cassette.interactions[:1]
    result = await start_run(TEMPLATE, model=ReplayModel(cassette, delay=0), tools=[lookup_module])
    assert result.error is not None
    assert "slot 'answer', request 2: the cassette holds only 1 request(s) for that slot" in result.error


def test_a_missing_or_foreign_cassette_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="no cassette at"):
        replay(tmp_path / "nope.json")
    (tmp_path / "other.json").write_text('{"version": 7}')
    with pytest.raises(ModelConfigError, match="is not an agentcell cassette of version 1"):
        replay(tmp_path / "other.json")
    with pytest.raises(ModelConfigError, match="cannot be used together"):
        cassette_model(None, record="a.json", replay="b.json")


async def test_the_offline_model_records_and_replays_too(tmp_path: Path) -> None:
    path = tmp_path / "offline.json"
    first = await start_run("Who leads PSYC605? [[answer|use_tools=true]]", model=record(path, "offline:fast"),
                            tools=[lookup_module])
    again = await start_run("Who leads PSYC605? [[answer|use_tools=true]]", model=replay(path, delay=0),
                            tools=[lookup_module])
    assert first.status == again.status == "completed"
    assert again.answer == first.answer and "offline model" in str(again.answer)
