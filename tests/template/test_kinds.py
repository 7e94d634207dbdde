"""The slot kinds: one record per type, read by the compiler, the engine and (through the generated
`slot_kinds.json`) both transcript reducers."""

from __future__ import annotations

import datetime as dt
import json
from typing import get_args

import pytest

from agentcell.engine.guidance import describe
from agentcell.engine.outputs import plan
from agentcell.template import SLOT_TYPES, SlotOptions, SlotSpec
from agentcell.template.kinds import JSON_PATH, KINDS, TEMPORAL_TYPES, SlotType, as_json, json_text
from agentcell.template.types import KNOWN_TYPES, resolve_type
from agentcell.transcript import is_text_type

NOW = dt.datetime(2026, 3, 2, 14, 5, tzinfo=dt.UTC)
TEXT_LIKE = ("text", "extract", "think", "speak", "poem")


def test_the_committed_json_is_what_the_kinds_write() -> None:
    """Change a kind, then run `python scripts/write_slot_kinds.py`: the JS reducer reads this file."""
    assert JSON_PATH.read_text(encoding="utf-8") == json_text()
    assert json.loads(JSON_PATH.read_text(encoding="utf-8")) == as_json()


def test_every_slot_type_has_one_record() -> None:
    assert list(KINDS) == list(get_args(SlotType))
    assert all(kind.name == name for name, kind in KINDS.items())
    assert tuple(name for name in get_args(SlotType) if name not in ("class", "action")) == SLOT_TYPES


def test_the_text_like_kinds_are_the_ones_every_view_shows_as_text() -> None:
    assert tuple(name for name, kind in KINDS.items() if kind.streams_text) == TEXT_LIKE
    shown = json.loads(JSON_PATH.read_text(encoding="utf-8"))["shown_as_text"]
    assert set(shown) == {"", *TEXT_LIKE, "respond", "default"}
    for name in shown:
        assert is_text_type(name), name
    # A list of text is a typed value: the slot's type carries its quantifier (`think*`).
    for name in ("think*", "poem{2}", "int", "json", "halt", "Person", "@fetch", "str"):
        assert not is_text_type(name), name


@pytest.mark.parametrize("name", TEXT_LIKE)
def test_a_text_like_slot_streams_and_a_list_of_it_does_not(name: SlotType) -> None:
    assert plan(SlotSpec(name="x", type=name), SlotOptions(), now=NOW).streams_text
    assert not plan(SlotSpec(name="x", type=name, quantifier=(0, None)), SlotOptions(), now=NOW).streams_text


def test_always_required_is_one_fact() -> None:
    """The compiler's and the engine's tables disagreed (json, class, halt); the engine's answer type is the truth."""
    required = {name for name, kind in KINDS.items() if kind.always_required}
    assert required == {"json", "poem", "record", "decide", "score", "halt", "date_rule", "class"}
    for name in ("int", "bool", "date", "duration", "json", "record", "date_rule", "score", "decide"):
        options = SlotOptions(choices=("low", "high")) if name == "score" else SlotOptions()
        schema = json.dumps(plan(SlotSpec(name="x", type=name), options, now=NOW).type.model_json_schema())
        assert ("Null if there is none" not in schema) == (name in required), name


def test_temporal_is_one_fact() -> None:
    assert {"date", "datetime", "time", "duration", "date_rule"} == TEMPORAL_TYPES
    for name in TEMPORAL_TYPES:
        assert "Resolve relative phrases" in describe(SlotSpec(name="x", type=name), SlotOptions())
    assert "Resolve relative phrases" not in describe(SlotSpec(name="x", type="int"), SlotOptions())


def test_aliases_and_synonyms_come_from_the_records() -> None:
    assert [resolve_type(a) for a in ("respond", "default", "boolean")] == ["text", "text", "bool"]
    assert resolve_type("str") is None  # a synonym is only suggested
    assert KNOWN_TYPES[:3] == ("text", "respond", "default")
    assert "class" not in KNOWN_TYPES and "action" not in KNOWN_TYPES
