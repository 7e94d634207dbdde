"""The run's last row in journal format 2: the result without the messages its rows hold, rebuilt on load;
format 1 journals (the result whole) still load."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

from agentcell import journal
from agentcell.engine import start_run
from agentcell.errors import JournalWarning
from agentcell.events import ProcessingComplete
from agentcell.journal import Journal
from agentcell.result import RunResult
from tests.engine.conftest import Call, Final, Script, conversation, slot, template

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "journal"


def lookup(q: str) -> str:
    """Look q up."""
    return f"found {q}"


def last_row(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes().splitlines()[-1])  # type: ignore[no-any-return]


CONVERSATION = [
    [("user", "Earlier?")], [("assistant", "Earlier.")],
    [("user", "First?")], [("assistant", "The answer is 1.")],
    [("user", "Second?")], [("call", "lookup", {"q": "x"})], [("return", "lookup", "found x")],
    [("assistant", "Found it.")],
    [("user", "Count?")], [("call", "final_result", {"response": 3})],
    [("return", "final_result", "Final result processed.")],
]


def test_a_format_1_journal_still_loads_whole() -> None:
    assert "format" not in last_row(FIXTURES / "v1tools.jsonl")  # written before format 2
    record = journal.load("v1tools", path=FIXTURES)
    result = record.to_result()
    assert record.finished and not record.skipped
    assert (result.status, result.results, result.history_length) == (
        "completed", {"a": "The answer is 1.", "b": "Found it.", "n": 3}, 2)
    assert conversation(result.messages) == CONVERSATION
    assert list(result.slot_messages) == ["a", "b", "n"]
    assert result.messages == (*record.history, *itertools.chain.from_iterable(result.slot_messages.values()))
    responses = [m for m in result.messages[2:] if isinstance(m, ModelResponse)]
    assert responses and all(m.run_id for m in responses)  # stamped by pydantic-ai after their rows were written


async def _run(folder: Path, run_id: str) -> RunResult:
    history = [ModelRequest(parts=[UserPromptPart(content="Earlier?")]), ModelResponse(parts=[TextPart("Earlier.")])]
    script = Script(["The answer ", "is 1."], [Call("lookup", {"q": "x"}, id="c1")], ["Found it."], [Final(3)])
    tpl = template(slot("a", prompt="First?"), slot("b", prompt="Second?", use_tools=True),
                   slot("n", "int", prompt="Count?"))
    return await start_run(tpl, model=script.model, tools=[lookup], journal=folder, run_id=run_id, history=history)


async def test_the_last_row_leaves_out_the_messages_its_rows_hold_and_loads_whole(tmp_path: Path) -> None:
    result = await _run(tmp_path, "v2tools")
    assert conversation(result.messages) == CONVERSATION
    row = last_row(tmp_path / "v2tools.jsonl")
    assert row["format"] == 2 and "result_messages" not in row
    assert "messages" not in row["event"]["result"] and "slot_messages" not in row["event"]["result"]
    # Each slot's last response was stamped with run ids after its row was written: the row says so in a patch,
    # without writing the message again. Slot n's tail holds the output tool's return, which no row holds.
    assert row["from"] == {"a": 2, "b": 4, "n": 2}
    assert {slot: len(tail) for slot, tail in row["tails"].items()} == {"n": 1}
    assert {slot: list(p) for slot, p in row["patches"].items()} == {"a": ["1"], "b": ["3"], "n": ["1"]}
    assert set(row["patches"]["a"]["1"]) == {"run_id", "conversation_id", "model_id"}
    record = journal.load("v2tools", path=tmp_path)
    assert record.to_result() == result and not record.skipped
    fixture = (FIXTURES / "v1tools.jsonl").stat().st_size
    assert (tmp_path / "v2tools.jsonl").stat().st_size < fixture - 8_000  # the same run, ~10 KB less


def _messages() -> tuple[ModelRequest, ModelResponse]:
    return ModelRequest(parts=[UserPromptPart(content="Go")]), ModelResponse(parts=[TextPart("Done")])


def _end(messages: tuple[Any, ...], *, whole: tuple[Any, ...] | None = None) -> ProcessingComplete:
    result = RunResult(run_id="r", status="completed", results={"a": "Done"}, answer="Done",
                       messages=messages if whole is None else whole, slot_messages={"a": messages})
    return ProcessingComplete(run_id="r", status="completed", result=result)


def test_a_message_changed_after_its_row_was_written_is_written_again(tmp_path: Path) -> None:
    """Rows hold a message as it was when they were made: one pydantic-ai changed since (here its parts list
    replaced, as it does when it adds parts) goes in the tail, and so does every message after it."""
    request, response = _messages()
    log = Journal(tmp_path / "r.jsonl")
    log.history([])
    log.messages("a", 0, [request, response])
    request.parts = [*request.parts, UserPromptPart(content="and more")]
    event = _end((request, response))
    log.event(event)
    row = last_row(tmp_path / "r.jsonl")
    assert row["from"] == {"a": 0} and len(row["tails"]["a"]) == 2
    assert journal.load("r", path=tmp_path).to_result() == event.result


def test_messages_not_built_from_the_history_and_slots_are_written_whole(tmp_path: Path) -> None:
    request, response = _messages()
    log = Journal(tmp_path / "r.jsonl")
    log.history([])
    log.messages("a", 0, [request, response])
    event = _end((request, response), whole=(response,))
    log.event(event)
    row = last_row(tmp_path / "r.jsonl")
    assert row["from"] == {"a": 2} and row["tails"] == {} and len(row["result_messages"]) == 1
    assert journal.load("r", path=tmp_path).to_result() == event.result


def test_a_newer_format_or_an_ending_the_rows_do_not_hold_is_left_out_with_a_warning(tmp_path: Path) -> None:
    request, response = _messages()
    log = Journal(tmp_path / "r.jsonl")
    log.history([])
    log.messages("a", 0, [request, response])
    log.event(_end((request, response)))
    lines = (tmp_path / "r.jsonl").read_bytes().splitlines()
    for change, why in (({"format": 3}, "journal format 3"), ({"from": {"a": 5}}, "its rows hold 2")):
        shutil.rmtree(tmp_path / "x", ignore_errors=True)
        (tmp_path / "x").mkdir()
        (tmp_path / "x" / "r.jsonl").write_bytes(b"\n".join([*lines[:-1], json.dumps({**json.loads(lines[-1]),
                                                                                       **change}).encode(), b""]))
        with pytest.warns(JournalWarning, match=why):
            record = journal.load("r", path=tmp_path / "x")
        assert not record.finished and conversation(record.slot_messages["a"]) == [[("user", "Go")], [("assistant", "Done")]]


async def test_a_run_read_back_from_its_journal_forks_from_the_rebuilt_record(tmp_path: Path) -> None:
    await _run(tmp_path, "v2tools")
    restored = journal.load("v2tools", path=tmp_path).to_result()
    script = Script(["Forked."], [Final(4)])
    forked = await restored.fork(1, slot="b", tool_results={"c1": "EDITED"}, model=script.model, journal=False)
    assert forked.results == {"a": "The answer is 1.", "b": "Forked.", "n": 4}
    sent = conversation(script.requests[0].messages)
    assert sent[:4] == CONVERSATION[:4] and sent[-2:] == [[("call", "lookup", {"q": "x"})],
                                                          [("return", "lookup", "EDITED")]]
