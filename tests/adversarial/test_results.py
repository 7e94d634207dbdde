"""Tool results the JSON encoder can't hold, huge ones, and lone surrogates.

Before: a tool returning `object()` or `range(3)` was shown as succeeded, then the run failed with
`PydanticSerializationError: Unable to serialize unknown type`; `bytes` (not UTF-8), a cyclic list
and a 5,000-deep list failed the run before the call was even shown done; a 200,000-character
result went to the model (and the widget, the journal) whole; a lone surrogate went everywhere as
it was. After: the documented conversion (`engine/results.py`) runs inside the call, so what the
widget shows as done is exactly what the model reads; a result past `RESULT_CHARS` is clipped with a
note the model reads; surrogates are replaced and counted in a warning.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
from typing import Any

import pytest

from agentcell.engine import start_run
from agentcell.engine.results import CLIP_NOTE, ITEMS, RESULT_CHARS, convert_result
from agentcell.events import ToolCompleted
from tests.engine.conftest import Call, Script, slot, template

pytestmark = pytest.mark.anyio


def _cyclic() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def _deep(levels: int) -> list[Any]:
    top: list[Any] = []
    here = top
    for _ in range(levels):
        here.append([])
        here = here[0]
    return top


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque thing>"


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no")


CASES: list[tuple[str, Any, str]] = [
    ("object", Opaque(), "<Opaque thing>"),
    ("bad-repr", BadRepr(), "<BadRepr whose repr raised RuntimeError>"),
    ("range", range(3), "[0,1,2]"),
    ("huge-range", range(10**20), json.dumps([*range(ITEMS), "… more"], separators=(",", ":"), ensure_ascii=False)),
    ("utf8-bytes", "é".encode(), "é"),
    ("binary-bytes", b"\xff\x00ab", "b'\\xff\\x00ab'"),
    ("cyclic", _cyclic(), '[1,"<cycle>"]'),
    ("set", {3, 1, 2}, "[1,2,3]"),
    ("mixed-set", {1, "a"}, None),  # order unspecified; only checked to be valid JSON
    ("dict-odd-keys", {1: "a", (2, 3): "b"}, '{"1":"a","(2, 3)":"b"}'),
    ("nan", float("nan"), "nan"),
    ("dataclass", Point(1, 2), '{"x":1,"y":2}'),
    ("datetime", datetime.date(2026, 11, 30), "2026-11-30"),
    ("decimal", decimal.Decimal("1.5"), "1.5"),
]


@pytest.mark.parametrize(("name", "value", "text"), CASES, ids=[c[0] for c in CASES])
async def test_odd_result_is_converted_before_the_call_is_shown_done(name: str, value: Any, text: str | None) -> None:
    async def odd() -> Any:
        """Return something odd."""
        return value

    script = Script([Call("odd")], ["ok"])
    run = start_run(template(slot("a", use_tools=True)), model=script.model, tools=[odd], journal=False)
    result = await run.wait()
    assert result.status == "completed"
    done = next(e for e in run.events_so_far if isinstance(e, ToolCompleted))
    assert done.ok
    if text is not None:
        assert done.result == text
    returned = [p.model_response_str() for m in script.requests[1].messages for p in m.parts if p.part_kind == "tool-return"]
    assert returned == [done.result]  # the model reads exactly what the widget shows


def test_deep_list_shows_its_depth_then_gives_up() -> None:
    converted = convert_result(_deep(5000))
    assert converted.text.startswith("[" * 64) and "<list nested too deeply to show>" in converted.text


def test_numpy_and_pandas_become_lists_and_records() -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    assert convert_result(np.arange(4).reshape(2, 2)).value == [[0, 1], [2, 3]]
    assert convert_result(np.float64(2.5)).value == 2.5
    frame = pd.DataFrame({"a": [1, 2], "when": pd.to_datetime(["2026-01-01", "2026-01-02"])})
    assert convert_result(frame).value == [
        {"a": 1, "when": "2026-01-01T00:00:00"},
        {"a": 2, "when": "2026-01-02T00:00:00"},
    ]
    assert convert_result(pd.Series([1, 2], index=["x", "y"])).value == {"x": 1, "y": 2}
    assert convert_result(pd.DataFrame({"a": range(ITEMS + 5)})).value[-1] == "… 5 more"


async def test_huge_result_is_clipped_with_a_note_the_model_reads() -> None:
    async def dump() -> str:
        """Return far too much."""
        return "x" * (RESULT_CHARS + 500)

    script = Script([Call("dump")], ["ok"])
    # compaction=None: the compaction view would cut it further (to `Compaction.tool_result_chars`)
    run = start_run(
        template(slot("a", use_tools=True)), model=script.model, tools=[dump], journal=False, compaction=None
    )
    await run.wait()
    note = CLIP_NOTE.format(total=RESULT_CHARS + 500, kept=RESULT_CHARS)
    returned = [p.content for m in script.requests[1].messages for p in m.parts if p.part_kind == "tool-return"]
    assert returned == ["x" * RESULT_CHARS + note]
    done = next(e for e in run.events_so_far if isinstance(e, ToolCompleted))
    assert done.result == returned[0]
