"""The one transcript reducer: golden fixtures shared with `js/tests/golden.test.js`, and live reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentcell.events import ThinkingDelta, TokenDelta
from agentcell.labels import labels
from agentcell.transcript import Transcript
from agentcell.transcript.handlers import HANDLERS
from agentcell.transcript.items import (
    LITERALS_JSON,
    PAYLOAD_KINDS,
    ItemType,
    item_keys,
    literal_values,
    literals,
    literals_text,
)
from agentcell.usage import Usage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
CASES = sorted(p.name.removesuffix(".events.json") for p in FIXTURES.glob("*.events.json"))


def test_there_are_at_least_ten_golden_sequences() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("name", CASES)
def test_golden_transcript(name: str) -> None:
    events = json.loads((FIXTURES / f"{name}.events.json").read_text())
    expected = json.loads((FIXTURES / f"{name}.transcript.json").read_text())
    assert Transcript.from_wire(events).to_json() == expected


def test_every_event_kind_has_a_handler_or_is_a_teaching_payload() -> None:
    source = (Path(__file__).parents[2] / "src" / "agentcell" / "events" / "run.py").read_text()
    declared = set(re.findall(r'kind: Literal\["(\w+)"\]', source))
    assert declared, "no kinds found in events.py"
    assert declared - set(HANDLERS) - PAYLOAD_KINDS == set()


def test_typed_deltas_take_the_fast_path_to_the_same_state() -> None:
    typed, wired = Transcript(), Transcript()
    started = {"kind": "run_started", "run_id": "r", "slots": [{"name": "a", "type": "text"}], "t": 0}
    typed.apply(started)
    wired.apply(started)
    for i, text in enumerate(["one ", "two"]):
        typed.apply_event(TokenDelta(run_id="r", slot="a", text=text, round=1), t=i)
        wired.apply({"kind": "token_delta", "run_id": "r", "slot": "a", "text": text, "round": 1, "t": i})
    typed.apply_event(ThinkingDelta(run_id="r", slot="a", text="hm", round=2), t=3)
    wired.apply({"kind": "thinking_delta", "run_id": "r", "slot": "a", "text": "hm", "round": 2, "t": 3})
    assert typed.to_json() == wired.to_json()
    assert typed.partial == {"a": "one two"}


def test_retracted_narration_is_not_the_answer() -> None:
    tr = Transcript.from_wire([
        {"kind": "run_started", "run_id": "r", "slots": [{"name": "a"}]},
        {"kind": "token_delta", "run_id": "r", "slot": "a", "text": "Let me look. ", "round": 1},
        {"kind": "slot_retracted", "run_id": "r", "slot": "a", "reason": "gathering", "round": 1},
        {"kind": "token_delta", "run_id": "r", "slot": "a", "text": "It is 4", "round": 2},
    ])
    assert tr.partial == {"a": "It is 4"}
    assert tr.slots["a"].rounds[1].items[0]["text"] == "Let me look. "


def test_events_of_another_run_and_malformed_events_change_nothing() -> None:
    tr = Transcript.from_wire([{"kind": "run_started", "run_id": "r", "slots": [{"name": "a"}]}])
    before = tr.to_json()
    for odd in [{"kind": "token_delta", "run_id": "other", "slot": "a", "text": "x"}, None, {"kind": 3},
                {"kind": "tool_completed", "run_id": "r", "slot": None, "call_id": {"x": []}}]:
        tr.apply(odd)  # type: ignore[arg-type]
    after = tr.to_json()
    assert [i["type"] for i in after.pop("items")] == ["tool"]  # a run-level call seen only by its completion
    before.pop("items")
    assert after == before


def test_literals_json_is_written_from_the_python_types() -> None:
    """The JS reducer's statuses and item types (`literals.json`) are the Python `Literal` types, not a copy."""
    assert LITERALS_JSON.read_text() == literals_text(), "run `PYTHONPATH=src python scripts/write_literals.py`"
    assert literals()["final_statuses"] == ["completed", "stopped", "halted", "budget_exhausted", "failed"]


def test_every_status_a_transcript_can_have_has_a_label() -> None:
    words = labels()["status"]
    for status in literals()["slot_statuses"] + literals()["run_statuses"]:
        assert status in words, status


def test_usage_is_the_usage_type_per_slot_and_per_run() -> None:
    def used(requests: int, cost: float | None) -> dict[str, object]:
        return {"kind": "usage_updated", "run_id": "r", "slot": "a",
                "usage": {"requests": requests, "tool_calls": 0, "input_tokens": 10 * requests,
                          "output_tokens": requests, "cost": cost}}

    tr = Transcript.from_wire([{"kind": "run_started", "run_id": "r", "slots": [{"name": "a"}, {"name": "b"}]},
                               used(1, None), used(2, 0.5), {**used(5, "odd"), "slot": "b"}])
    assert tr.usage == Usage(requests=5, input_tokens=50, output_tokens=5)
    assert tr.slots["a"].usage == Usage(requests=2, input_tokens=20, output_tokens=2, cost=0.5)
    assert tr.slots["b"].usage == Usage(requests=3, input_tokens=30, output_tokens=3)
    assert tr.to_json()["usage"] == {"requests": 5, "tool_calls": 0, "input_tokens": 50, "output_tokens": 5,
                                     "cost": None}


def test_the_item_union_and_the_item_type_literal_name_the_same_types() -> None:
    assert sorted(item_keys()) == sorted(literal_values(ItemType))


@pytest.mark.parametrize("name", CASES)
def test_every_item_has_the_keys_of_its_typed_dict(name: str) -> None:
    tr = Transcript.from_wire(json.loads((FIXTURES / f"{name}.events.json").read_text())).to_json()
    expected = json.loads((FIXTURES / f"{name}.transcript.json").read_text())
    keys = item_keys()
    for got in (tr, expected):
        for item in got["items"] + [it for s in got["slots"] for r in s["rounds"] for it in r["items"]]:
            assert list(item) == ["type", *keys[item["type"]]], item["type"]


@pytest.mark.parametrize("status", [[], {}, "nonsense", None, 3])
def test_an_odd_final_status_ends_the_run_and_slot_failed(status: object) -> None:
    tr = Transcript.from_wire([
        {"kind": "run_started", "run_id": "r", "slots": [{"name": "a"}, {"name": "b"}]},
        {"kind": "slot_failed", "run_id": "r", "slot": "a", "status": status, "error": "x"},
        {"kind": "slot_started", "run_id": "r", "slot": "b"},
        {"kind": "processing_complete", "run_id": "r", "status": status},
    ])
    assert (tr.ended, tr.status, tr.slots["a"].status, tr.slots["b"].status) == (True, "failed", "failed", "failed")


def test_every_handled_event_kind_is_in_a_golden_fixture() -> None:
    """A kind both reducers handle but no fixture holds could be reduced differently by each, unseen:
    a new event kind gets a golden case (`tests/fixtures/transcripts/generate.py`)."""
    seen = {ev.get("kind") for name in CASES for ev in json.loads((FIXTURES / f"{name}.events.json").read_text())}
    assert sorted(set(HANDLERS) - seen) == []
