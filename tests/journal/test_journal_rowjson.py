"""A journal row with long strings is written as pieces (`journal/rowjson.py`): the same bytes, no long string encoded whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_core import to_json

from agentcell.events import ProcessingComplete, SlotCompleted, ToolStarted
from agentcell.journal import Journal
from agentcell.journal.rowjson import KEEP, LONG, SLICE, LongStrings, LongText, dump_pieces
from agentcell.journal.writer import event_adapter
from agentcell.result import RunResult

ANSWER = ('He said "ok"\n\tthen \\ left é 中文 🎉 \x01\x1f ' * (LONG // 20))[: LONG + 7]


def run_end(answer: str) -> ProcessingComplete:
    messages = (ModelRequest(parts=[UserPromptPart(content="Go")]), ModelResponse(parts=[TextPart(content=answer)]))
    result = RunResult(run_id="r", status="completed", results={"answer": answer, "n": 1.5e-7}, answer=answer,
                       messages=messages, slot_messages={"answer": messages}, partial={"x": "short"})
    return ProcessingComplete(run_id="r", status="completed", result=result)


def long_pieces(pieces: tuple[bytes | LongText, ...]) -> list[LongText]:
    return [p for p in pieces if isinstance(p, LongText)]


def written(pieces: tuple[bytes | LongText, ...]) -> bytes:
    out: list[bytes] = []
    for piece in pieces:
        if isinstance(piece, LongText):
            piece.write(lambda data: out.append(bytes(data)))
        else:
            out.append(piece)
    return b"".join(out)


def test_the_run_end_row_has_the_dump_json_bytes_with_the_answer_measured_once() -> None:
    event = run_end(ANSWER)
    pieces = dump_pieces(event_adapter(), event, LongStrings())
    assert written(pieces) == event_adapter().dump_json(event, fallback=repr)
    long = long_pieces(pieces)
    assert len(long) == 4 and all(p is long[0] for p in long)  # answer, results, messages, slot_messages
    assert long[0].text is ANSWER and len(long[0]) == len(to_json(ANSWER))
    assert json.loads(written(pieces))["result"]["answer"] == ANSWER


def test_a_long_string_is_written_a_slice_at_a_time() -> None:
    text = ANSWER * (2 * SLICE // len(ANSWER) + 1)
    out: list[bytes] = []
    LongText(text).write(lambda data: out.append(bytes(data)))
    assert len(out) == 5 and max(map(len, out)) < 2 * SLICE  # quote, three slices, quote
    assert b"".join(out) == to_json(text)


def test_rows_without_a_long_string_are_one_piece_and_long_strings_in_lists_are_cut() -> None:
    small = ToolStarted(run_id="r", slot="s", call_id="c", tool_name="t", args={"q": "x" * (LONG - 1)}, round=1)
    assert dump_pieces(event_adapter(), small, LongStrings()) == (event_adapter().dump_json(small, fallback=repr),)
    other = "z" * LONG
    messages = [ModelResponse(parts=[TextPart(content=ANSWER), TextPart(content=other), TextPart(content=ANSWER)])]
    pieces = dump_pieces(ModelMessagesTypeAdapter, messages, LongStrings())
    assert written(pieces) == ModelMessagesTypeAdapter.dump_json(messages)
    assert len(long_pieces(pieces)) == 3


def test_an_answer_is_measured_once_for_the_rows_that_follow_and_at_most_keep_are_kept() -> None:
    long = LongStrings()
    first = long_pieces(dump_pieces(event_adapter(), SlotCompleted(run_id="r", slot="a", value=ANSWER), long))
    later = long_pieces(dump_pieces(event_adapter(), run_end(ANSWER), long))
    assert first[0] is later[0]
    equal_not_same = "".join([ANSWER[:10], ANSWER[10:]])
    assert long.piece(equal_not_same) is not first[0]  # by identity: another string is measured anew
    for i in range(KEEP):
        long.piece(f"{i}" * LONG)
    assert long.piece(ANSWER) is not first[0]  # evicted


def test_a_long_string_that_is_not_valid_utf8_is_scrubbed_in_the_file(tmp_path: Path) -> None:
    log = Journal(tmp_path / "run.jsonl", max_bytes=None)
    bad = "\ud83d" + ANSWER
    log.event(SlotCompleted(run_id="r", slot="a", value=bad, text=bad))
    log.close()
    row: dict[str, Any] = json.loads((tmp_path / "run.jsonl").read_bytes().decode("utf-8"))
    assert row["event"]["value"] == "\ufffd" + ANSWER


def test_the_events_own_values_are_left_as_they_were() -> None:
    """The placeholders go into the JSON-mode copy pydantic makes, never into the event's own containers."""
    value: dict[str, Any] = {"a": ANSWER, "b": [ANSWER, {"c": ANSWER}]}
    result = RunResult(run_id="r", status="completed", results={"x": value, "y": ANSWER}, answer=value)
    event = ProcessingComplete(run_id="r", status="completed", result=result)
    pieces = dump_pieces(event_adapter(), event, LongStrings())
    assert written(pieces) == event_adapter().dump_json(event, fallback=repr)
    assert value == {"a": ANSWER, "b": [ANSWER, {"c": ANSWER}]} and result.results["y"] is ANSWER


def test_rows_without_a_long_string_are_dumped_without_the_walk(tmp_path: Path, monkeypatch: Any) -> None:
    """Most rows (every event of a tool round, the round's messages) hold nothing long: the journal knows
    it from the event's wire check (`events.json.wire_fields`, handed on by the run's sink) or the messages'
    parts (`messages_long_free`) and dumps them directly; a walk of each row in Python cost ~2 M instructions a tool round."""
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart

    from agentcell.events import RequestCompleted, RunWarning, ToolStarted, Usage
    from agentcell.journal import rowjson

    walks: list[Any] = []
    original = rowjson._hollow
    monkeypatch.setattr(rowjson, "_hollow", lambda data, cut, prefix: (walks.append(data), original(data, cut, prefix)))
    log = Journal(tmp_path / "run.jsonl", max_bytes=None)
    log.event(RequestCompleted(run_id="r", slot="s", request=1, usage=Usage(requests=1), latency_ms=1.5))
    log.event(ToolStarted(run_id="r", slot="s", call_id="c", tool_name="t", args={"q": "x" * 100, "n": [1, 2]}))
    round_trip = [ModelResponse(parts=[ToolCallPart("t", {"q": "x"}, "c")]),
                  ModelRequest(parts=[ToolReturnPart("t", {"rows": [1, 2, 3]}, "c")])]
    log.messages("s", 0, round_trip)
    assert walks == []
    log.event(RunWarning(run_id="r", slot=None, message="w" * LONG))  # long at the top level
    log.event(ToolStarted(run_id="r", slot="s", call_id="c", tool_name="t", args={"q": ANSWER}))  # nested
    log.messages("s", 2, [ModelResponse(parts=[TextPart(ANSWER)])])
    log.messages("s", 3, [ModelRequest(parts=[ToolReturnPart("t", {"text": ANSWER}, "c")])])
    assert len(walks) == 4
    log.close()
    rows = [json.loads(line) for line in (tmp_path / "run.jsonl").read_bytes().splitlines()]
    assert rows[1]["event"]["args"]["q"] == "x" * 100 and rows[4]["event"]["args"]["q"] == ANSWER
    assert rows[5]["messages"][0]["parts"][0]["content"] == ANSWER
    assert rows[6]["messages"][0]["parts"][0]["content"] == {"text": ANSWER}
