"""The slot kinds: one record per slot type, the only place a fact about a type is written.

A record says what the compiler accepts (aliases, constraint options, values without a key, lists),
what the engine asks the model for (its guidance, its answer's shape and converter, whether it streams
as free text, whether its answer may be missing, whether it reads the run's reference time) and what
every view shows (free text as Markdown, anything else as its JSON value). The compiler (`types.py`,
`slotcompile.py`), the engine (`engine/outputs.py`, `engine/guidance.py`, `engine/slot.py`) read
`KINDS`; the transcript reducers — Python (`transcript/model.py`) and JavaScript (`js/src/state/core.js`)
— and so the live widget, the saved view and the lesson read `slot_kinds.json`, written from it.

Adding a slot type takes two files: its name in `SlotType` and its `SlotKind` in `KINDS` (this file;
an answer shape from `answers.py` or one written beside the record), then
`python scripts/write_slot_kinds.py` to rewrite `src/agentcell/slot_kinds.json` (a test checks the
committed file equals what this module writes).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias

from . import answers
from .answers import Answer, Check

SlotType: TypeAlias = Literal[
    "text", "json", "bool", "int", "number", "pick", "halt",
    "extract", "think", "speak", "poem", "decide", "score", "record",
    "date", "datetime", "time", "duration", "date_rule",
    "class", "action",
]  # fmt: skip
"""The value a slot asks for. Aliases (`respond`, `default`, `boolean`) are resolved by the compiler;
`class` is a notebook type (`SlotSpec.class_name`), `action` runs `SlotSpec.action` (no model call)."""

NUMERIC = frozenset({"ge", "le", "gt", "lt"})
STRING = frozenset({"min_length", "max_length", "pattern"})
CONSTRAINTS = NUMERIC | STRING
Positional: TypeAlias = Literal["choices", "levels", "optional choices"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SlotKind:
    """Everything agentcell knows about one slot type."""

    name: SlotType
    guidance: str
    """What the model reads about one answer (the field description of its output)."""
    answer: Answer | None
    """The converter: one answer's type and its Python value (`None`: an action, no model call)."""
    aliases: tuple[str, ...] = ()
    """Other names a template may write for it (`[[respond:r]]`)."""
    synonyms: tuple[str, ...] = ()
    """Words people reach for; an unknown type that is one of them suggests this one."""
    constraints: frozenset[str] = frozenset()
    """Constraint options that fit it (canonical names: `ge`, `le`, `gt`, `lt`, `min_length`, …)."""
    positional: Positional | None = None
    """What values without a key are: `pick` choices (needed), `score` levels (two or more), `decide`
    choices (optional: without them it decides yes or no)."""
    listable: bool = True
    """Whether a quantifier may make it a list."""
    streams_text: bool = False
    """A single answer is free text: streamed as it comes, checked by an output validator, and shown as
    Markdown by every view (a list of them is a typed value)."""
    always_required: bool = False
    """Its answer is never `None`, with or without `!` (`json` may still *be* null: any JSON value)."""
    temporal: bool = False
    """Relative phrases ("next Tuesday") resolve against the run's reference time, given in its instructions."""
    iso: Callable[[str], object] | None = None
    """Reads `min`/`max` as ISO text with this (dates and times); `None`: bounds are numbers."""
    rule: Callable[[str], Check] | None = None
    """A rule its text keeps, given everything the model was shown (`extract`: a verbatim quote)."""
    written: bool = True
    """Named in a template by its name (`class` and `action` are not: a capital or `@` makes them)."""


def _text(name: SlotType, guidance: str, **facts: Any) -> SlotKind:
    return SlotKind(name=name, guidance=guidance, answer=answers.TEXT, constraints=STRING, streams_text=True, **facts)


def _moment(name: SlotType, kind: type[dt.date] | type[dt.time], guidance: str) -> SlotKind:
    return SlotKind(name=name, guidance=guidance, answer=answers.temporal(kind), constraints=NUMERIC, temporal=True,
                    iso=kind.fromisoformat)  # fmt: skip


_ALL: tuple[SlotKind, ...] = (
    _text("text", "A concise, sensible reply to the conversation.", aliases=("respond", "default"),
          synonyms=("str", "string")),
    SlotKind(name="json", guidance="Any JSON value.", answer=answers.plain(Any), always_required=True,
             synonyms=("list", "object")),
    SlotKind(name="bool", guidance="true or false.", answer=answers.plain(bool), aliases=("boolean",)),
    SlotKind(name="int", guidance="A whole number.", answer=answers.number(int), constraints=NUMERIC,
             synonyms=("integer",)),
    SlotKind(name="number", guidance="A number.", answer=answers.number(float), constraints=NUMERIC,
             synonyms=("float",)),
    SlotKind(name="pick", guidance="One of the allowed choices, exactly as written.", answer=answers.CHOICE,
             positional="choices", synonyms=("choice", "choose")),
    SlotKind(name="halt", guidance="Whether the condition holds, and why.", answer=answers.VERDICT, listable=False,
             always_required=True, synonyms=("guard",)),
    _text("extract", "Text copied verbatim from what you were given: never paraphrase, summarise or add anything.",
          rule=answers.verbatim, synonyms=("quote",)),
    _text("think", "Terse step-by-step notes and plans for yourself, not the reply itself."),
    _text("speak", "Just the next words spoken, with no speaker label and no quotation marks."),
    _text("poem", "A short poem (often a haiku) continuing the conversation.", always_required=True),
    SlotKind(name="decide", guidance="The decision.", answer=answers.CHOICE, positional="optional choices",
             listable=False, always_required=True),
    SlotKind(name="score", guidance="The number of the level that fits best.", answer=answers.SCORE,
             positional="levels", listable=False, always_required=True),
    SlotKind(name="record", guidance="A JSON object with string keys.", answer=answers.plain(dict[str, Any]),
             always_required=True, synonyms=("dict",)),
    _moment("date", dt.date, "A date as YYYY-MM-DD."),
    _moment("datetime", dt.datetime,
            "A date and time in ISO 8601 with its UTC offset, e.g. 2026-03-02T15:00:00+00:00."),
    _moment("time", dt.time, "A time as HH:MM:SS."),
    SlotKind(name="duration", guidance="A duration in ISO 8601, e.g. PT2H30M (or a number of seconds).",
             answer=answers.plain(dt.timedelta), temporal=True, synonyms=("timedelta",)),
    SlotKind(name="date_rule", guidance="A recurrence rule.", answer=answers.RECURRENCE, always_required=True,
             temporal=True),
    SlotKind(name="class", guidance="An object of the requested shape.", answer=answers.NOTEBOOK_CLASS,
             always_required=True, written=False),
    SlotKind(name="action", guidance="", answer=None, listable=False, written=False),
)  # fmt: skip

KINDS: dict[SlotType, SlotKind] = {kind.name: kind for kind in _ALL}
"""Every slot type's record, in the order error messages list them."""

SLOT_TYPES: tuple[SlotType, ...] = tuple(kind.name for kind in _ALL if kind.written)
"""The built-in types a slot may name."""

TEMPORAL_TYPES: frozenset[SlotType] = frozenset(kind.name for kind in _ALL if kind.temporal)
"""Types whose relative phrases ("next Tuesday") resolve against the run's reference time."""

DEFAULT: SlotType = "text"
"""The type of a slot that names none (`[[answer]]`)."""

JSON_PATH = Path(__file__).resolve().parents[1] / "slot_kinds.json"
"""Where the kinds are written for the readers that cannot import this module (the transcript, the JS)."""


def as_json() -> dict[str, Any]:
    """What `slot_kinds.json` holds: the facts every view needs, per kind, plus the names shown as free text."""
    kinds = {
        kind.name: {
            "aliases": list(kind.aliases),
            "streams_text": kind.streams_text,
            "always_required": kind.always_required,
            "temporal": kind.temporal,
            "listable": kind.listable,
            "constraints": sorted(kind.constraints),
            "positional": kind.positional,
            "written": kind.written,
            "guidance": kind.guidance,
        }
        for kind in _ALL
    }
    text = [name for kind in _ALL if kind.streams_text for name in (kind.name, *kind.aliases)]
    if KINDS[DEFAULT].streams_text:
        text.insert(0, "")  # a slot whose type is not said (an empty `slot_type`) is of the default type
    return {
        "about": "Written by `python scripts/write_slot_kinds.py` from src/agentcell/template/kinds.py: do not edit.",
        "default": DEFAULT,
        "shown_as_text": text,
        "kinds": kinds,
    }


def json_text() -> str:
    """`slot_kinds.json` as it is committed: one line per kind, so a changed fact is a one-line diff."""
    data = as_json()
    kinds = ",\n".join(f"  {json.dumps(name)}: {json.dumps(facts, ensure_ascii=False)}"
                        for name, facts in data.pop("kinds").items())  # fmt: skip
    head = ",\n".join(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}" for key, value in data.items())
    return f"{{\n{head},\n \"kinds\": {{\n{kinds}\n }}\n}}\n"


def write_json() -> None:
    """Rewrite `slot_kinds.json` from `KINDS` (`python scripts/write_slot_kinds.py`)."""
    JSON_PATH.write_text(json_text(), encoding="utf-8")
