"""Model text that repeats the run's key is masked wherever the run's text is kept (issue 40, item 9).

Before: a server (or a model told its key) echoing the API key in its content had it kept verbatim in
the answer, the streamed deltas, the static view, the journal, the saved messages and the exported
lesson, while the wire view masked it. After: the run knows its models' credentials (API key, base-URL
password, credential headers) and masks them in the responses' parts before anything keeps them, in the
answer and partial texts, and in the stream, where a key split across deltas is caught by holding back
the end of a delta that could begin one until the next delta arrives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from agentcell.engine import start_run
from agentcell.events.json import to_wire
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.providers.known_secrets import KnownSecrets
from agentcell.render.lesson import lesson_html
from agentcell.tools import readonly
from tests.openai_server import Call, FakeOpenAI, Reply, Text, Think

pytestmark = pytest.mark.anyio
KEY = "hunter2hunter2-RUNSECRETVALUE"
"""Not key-shaped (no `sk-`): only knowing the run's key can mask it."""


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as fake:
        yield fake


@readonly
def lookup(code: str) -> str:
    """Look a code up."""
    return f"code {code} is fine"


class _Widget(AgentWidget):
    def send(self, content: Any, buffers: Any = None) -> None:
        self.sent.append(content)


def _saved(run: Any, result: Any, journal: Path) -> str:
    widget = _Widget()
    widget.sent = []
    for event in run.events_so_far:
        widget.apply(event)
    html, _ = widget.static_bundle()
    return "\n".join([
        (journal / f"{run.run_id}.jsonl").read_text(),
        result.to_json(),
        repr(result.answer),
        json.dumps(result.partial),
        json.dumps([to_wire(e, t=0) for e in run.events_so_far], ensure_ascii=False),
        json.dumps(widget.sent, ensure_ascii=False, default=str),
        json.dumps(html, ensure_ascii=False),
        lesson_html([("r", run.transcript)]),
    ])


async def test_a_key_the_model_repeats_is_masked_in_every_saved_text(server: FakeOpenAI, tmp_path: Path) -> None:
    slow = {"pieces": 12, "delay": 0.03}  # each piece its own delta (slower than the 20 ms merge): the key is split
    server.script(
        Reply(Think(f"The user's key is {KEY}.", **slow), Text(f"I will check {KEY} first.", **slow),
              Call("lookup", {"code": "A1"}, id="c1")),
        Reply(Text(f"Your key is {KEY}; keep it secret.", **slow)),
    )
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=server.base_url, api_key=KEY))
    run = start_run("Check it. [[answer|use_tools=true]]", model=model, tools=[lookup], journal=tmp_path)
    result = await run
    assert result.status == "completed", result.error
    assert result.answer == "Your key is ***; keep it secret."
    deltas = [e.text for e in run.events_so_far if e.kind == "token_delta"]
    assert len(deltas) > 3  # the stream was not merged into one delta: the key really was split
    assert "".join(deltas).endswith("Your key is ***; keep it secret.")
    saved = _saved(run, result, tmp_path)
    assert KEY not in saved
    assert "I will check *** first." in saved and "The user's key is ***." in saved


async def test_a_stopped_answer_keeps_its_partial_text_masked(server: FakeOpenAI, tmp_path: Path) -> None:
    server.script(Reply(Text(f"Your key is {KEY} and more text follows", pieces=30, delay=0.03)))
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=server.base_url, api_key=KEY))
    run = start_run("Say it. [[answer]]", model=model, journal=tmp_path)
    async for event in run.events():
        if event.kind == "token_delta" and "more" in "".join(e.text for e in run.events_so_far if e.kind == "token_delta"):
            run.cancel()  # Stop, once the key has streamed
            break
    result = await run
    assert result.status == "stopped"
    assert result.partial["answer"].startswith("Your key is ***")
    assert KEY not in _saved(run, result, tmp_path)


def test_placeholders_and_short_values_are_not_secrets() -> None:
    """A local server's "no key" (`ollama`, `lm-studio`) must not be masked in every answer that names it."""
    known = KnownSecrets(["ollama", "lm-studio", "abc", "EMPTY", KEY])
    assert known.mask("ollama and lm-studio serve models; abc") == "ollama and lm-studio serve models; abc"
    assert known.mask(f"x{KEY}y") == "x***y"


@pytest.mark.parametrize(
    ("text", "held"),
    [("", 0), ("no key here", 0), ("ends with h", 1), ("ends with hunter2", 7), (f"has {KEY[:-1]}", len(KEY) - 1),
     ("hunter2hunter", 13), ("hunter2hunter2-R", 16), ("ends with hunter3", 0)],
)
def test_the_end_of_a_delta_is_held_when_it_could_begin_the_key(text: str, held: int) -> None:
    assert KnownSecrets([KEY]).tail(text) == held


def test_a_key_split_across_deltas_of_interleaved_streams_is_masked() -> None:
    """Two streams of one run interleave (a guard's thinking beside a slot's answer): each holds back
    its own end, so a key cut across one stream's deltas is masked though the other's came between."""
    from types import SimpleNamespace

    from agentcell.engine.eventlog import EventLog
    from agentcell.engine.sink import Sink as _Sink
    from agentcell.events import ProcessingComplete, ThinkingDelta, TokenDelta
    from agentcell.result import RunResult

    log = EventLog()
    sink = _Sink(log, "r1")
    sink.state = SimpleNamespace(secrets=KnownSecrets([KEY]))  # type: ignore[assignment]
    cut = len(KEY) // 2
    for event in [
        TokenDelta(run_id="r1", slot="answer", text=f"key: {KEY[:cut]}", round=1),
        ThinkingDelta(run_id="r1", slot="guard", text=f"it is {KEY[:3]}", round=1),
        TokenDelta(run_id="r1", slot="answer", text=f"{KEY[cut:]} done", round=1),
        ThinkingDelta(run_id="r1", slot="guard", text="xx, no key", round=1),
    ]:
        sink._deliver(event)
    sink._deliver(ProcessingComplete(run_id="r1", status="completed", result=RunResult(run_id="r1", status="completed")))
    texts = {(e.kind, e.slot): "" for e in log.events if e.kind.endswith("_delta")}
    for e in log.events:
        if e.kind.endswith("_delta"):
            texts[e.kind, e.slot] += e.text
    assert texts == {("token_delta", "answer"): "key: *** done", ("thinking_delta", "guard"): f"it is {KEY[:3]}xx, no key"}
    assert log.events[-1].kind == "processing_complete"
