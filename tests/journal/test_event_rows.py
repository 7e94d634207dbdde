"""An event's journal row is the JSON its wire conversion made, byte for byte what the event adapter writes.

The run's sink converts each event once (`events.json.wire_json`); the check of that conversion makes the
event's JSON, and the journal writes those bytes instead of dumping the event a second time. That is only right
while the two are the same bytes, for every kind of event: these tests hold them to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from agentcell import journal
from agentcell.engine import start_run
from agentcell.events import Event, ProcessingComplete, SlotCompleted, ThinkingDelta, TokenDelta, ToolStarted
from agentcell.events.json import wire_json
from agentcell.journal.writer import event_adapter
from tests.engine.conftest import Call, Final, Script, Think, slot, template

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
KINDS = {kind.__dataclass_fields__["kind"].default for kind in get_args(Event)}
"""Every kind of event this version knows (a fixture holds a future one too, for the views' sake)."""


def fixture_events() -> list[Event]:
    """The events of every golden transcript (tools, approvals, an MCP server, media, compaction, forks…) but
    the run's end."""
    events: list[Event] = []
    for path in sorted(FIXTURES.glob("*.events.json")):
        for item in json.loads(path.read_text()):
            item.pop("t", None)
            if item["kind"] in KINDS and item["kind"] != "processing_complete":  # that one: without its result
                events.append(event_adapter().validate_python(item))
    return events


def test_the_wire_json_of_every_fixture_event_is_the_adapters_json() -> None:
    events = fixture_events()
    kinds = {e.kind for e in events}
    assert len(kinds) >= 20  # the fixtures cover most kinds of event
    shared = 0
    for event in events:
        _, dumped = wire_json(event)
        if dumped is not None:
            assert dumped == event_adapter().dump_json(event, fallback=repr), event.kind
            shared += 1
    assert shared >= len(events) * 3 // 4


def test_an_event_the_wire_leaves_a_field_out_of_has_no_shared_json() -> None:
    assert wire_json(SlotCompleted(run_id="r", slot="a", value="hi", text="hi"))[1] is None  # `text` left out
    typed = SlotCompleted(run_id="r", slot="a", value=3, text="3")
    assert wire_json(typed)[1] == event_adapter().dump_json(typed)
    local = ToolStarted(run_id="r", slot="s", call_id="c", tool_name="t", args={}, round=1)
    assert wire_json(local)[1] is None  # `server` left out
    mcp = ToolStarted(run_id="r", slot="s", call_id="c", tool_name="t", args={}, round=1, server="git")
    assert wire_json(mcp)[1] == event_adapter().dump_json(mcp)
    assert wire_json(SlotCompleted(run_id="r", slot="a", value="\ud83d", text="x"))[1] is None  # not valid UTF-8


def lookup(q: str) -> str:
    """Look q up."""
    return f"found {q}"


def event_rows(path: Path) -> list[bytes]:
    """Each event row's `"event"` value as the bytes on disk (the run's last row aside)."""
    rows = []
    for line in path.read_bytes().splitlines():
        head, sep, body = line.partition(b',"event":')
        if sep and b'"format":' not in head:
            rows.append(body[:-1])  # the row's closing brace
    return rows


@pytest.mark.anyio
async def test_every_event_row_of_a_run_is_the_adapters_json_of_its_event(tmp_path: Path) -> None:
    script = Script([Think("hmm"), "A"], [Final({"n": 3})], [Call("lookup", {"q": "x"})], ["B1"])
    tpl = template(slot("a"), slot("n", type="number"), slot("b", use_tools=True))
    run = start_run(tpl, model=script.model, tools=[lookup], journal=tmp_path)
    await run
    events = [e for e in run.events_so_far if not isinstance(e, ProcessingComplete)]
    rows = event_rows(tmp_path / f"{run.run_id}.jsonl")
    assert len(rows) == len(events) > 12
    for row, event in zip(rows, events, strict=True):
        expected = event_adapter().dump_json(event, fallback=repr)
        if isinstance(event, TokenDelta | ThinkingDelta):  # a row of their own making: `kind` before the text
            assert json.loads(row) == json.loads(expected)
        else:
            assert row == expected, event.kind
    assert journal.load(run.run_id, path=tmp_path).events == run.events_so_far
