"""The teaching view without a kernel (saved notebooks, the lesson export) over real runs.

The fixtures in tests/fixtures/teaching/ are real engine runs (`runs.py`); the "lesson" run went through
pydantic-ai's real OpenAI client to the scripted HTTP server, so it carries captured HTTP exchanges.
`js/tests/teach.test.js` checks the live widget on the same files: both must name the same markers.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from agentcell.engine.calls import NUDGE
from agentcell.render.html import render_html
from agentcell.render.lesson import export_lesson, lesson_html
from agentcell.render.teaching.model import lesson_slot, marker_kinds, words
from agentcell.render.teaching.signature import py_type, python_source, signature
from agentcell.render.teaching.view import teaching_html
from agentcell.transcript import Transcript
from tests.fixtures.teaching.runs import SECRET_KEY

FIXTURES = Path(__file__).parents[1] / "fixtures" / "teaching"
MARKERS = {
    "lesson": ["retraction", "retry"],
    "loop": ["nudge", "final_round"],
    "final-round": ["final_round"],
    "budget": ["budget"],
    "guard-joined": ["guard_joined"],
    "guard-tripped": ["guard_tripped"],
    "approval": ["approval_denied"],
}


def events(name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((FIXTURES / f"{name}.events.json").read_text())
    return data


def transcript(name: str) -> Transcript:
    return Transcript.from_wire(events(name))


def shown_markers(html: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r'class="ac-marker" data-marker="([a-z_]+)"', html)))


@pytest.mark.parametrize("name", list(MARKERS), ids=list(MARKERS))
def test_the_saved_view_shows_the_markers_of_each_run(name: str) -> None:
    html = render_html(events(name))  # what a saved notebook shows without a kernel
    assert 'class="ac-teach-saved"' in html
    assert shown_markers(html) == MARKERS[name]
    tr = transcript(name)
    assert marker_kinds([lesson_slot(tr, s) for s in tr.slots.values()]) == MARKERS[name]


def test_lanes_rounds_bars_and_error_fed_back() -> None:
    html = teaching_html(transcript("lesson"))
    heads = re.findall(r'<div class="ac-lane-head" data-lane="\w+">([^<]+)</div>', html)
    assert heads == ["your code &amp; tools", "agentcell", "model"]
    assert re.findall(r'class="ac-seq" data-round="(\d)"', html) == ["1", "2", "3"]
    round1 = html[html.index('data-round="1"'):html.index('class="ac-seq" data-round="2"')]
    bars = re.findall(r'data-from="(\d+)" data-to="(\d+)" data-concurrent="true"', round1)
    assert len(bars) == 2
    (a0, a1), (b0, b1) = [(int(x), int(y)) for x, y in bars]
    assert a0 < b1 and b0 < a1  # the two tools' intervals overlap: they ran together
    assert "2 tools ran at the same time" in round1
    round2 = html[html.index('class="ac-seq" data-round="2"'):html.index('class="ac-seq" data-round="3"')]
    assert "error fed back — the model reads:" in round2 and "timetable service is down" in round2
    assert "<summary>1 earlier message</summary>" in round2


def test_signatures_read_like_the_python_the_learner_wrote() -> None:
    html = teaching_html(transcript("lesson"))
    assert ("def room_of(module_code: str, term: str = &#x27;autumn&#x27;):\n"
            "    &quot;&quot;&quot;Where a module is taught in a term.&quot;&quot;&quot;\n    ...") in html
    assert py_type({"type": "array", "items": {"type": "integer"}}) == "list[int]"
    assert py_type({"anyOf": [{"type": "string"}, {"type": "null"}]}) == "str | None"
    assert signature("f", {"properties": {"a": {"type": "string"}, "b": {"type": "integer", "default": 2}},
                           "required": ["a"]}) == "def f(a: str, b: int = 2)"
    assert python_source("g", "", {"properties": {}}) == "def g():\n    ..."


def test_the_wire_has_three_formats_and_the_http_body_without_the_key() -> None:
    html = teaching_html(transcript("lesson"))
    assert re.findall(r'class="ac-wire" data-round="2" data-format="(\w+)"', html) == ["openai", "pydantic_ai", "http"]
    assert "the wire · round 2 · HTTP (as sent) · 2 exchanges" in html
    assert "&quot;authorization&quot;: &quot;[redacted]&quot;" in html
    assert SECRET_KEY not in html and "SECRET" not in json.dumps(events("lesson"))


def test_the_nudge_text_is_the_engines() -> None:
    assert NUDGE.startswith(words()["nudge_prefix"])
    html = teaching_html(transcript("loop"))
    assert "Why now: the model repeated the same calls twice in a row." in html


class _Resources(HTMLParser):
    """Every attribute or CSS that would make a browser fetch something."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("src", "srcset", "poster", "data") or (key == "href" and tag in ("link", "base")):
                self.found.append(f"<{tag} {key}={value}>")


def test_the_lesson_export_is_one_file_with_nothing_to_fetch(tmp_path: Path) -> None:
    out = export_lesson(tmp_path / "lesson.html", *((n, transcript(n)) for n in MARKERS))
    html = out.read_text()
    assert html.startswith("<!doctype html>")
    parser = _Resources()
    parser.feed(html)
    assert parser.found == []
    assert not re.search(r"@import|url\(", html)
    assert "@media print" in html
    for name, kinds in MARKERS.items():
        assert f'aria-label="run {name}"' in html
        assert set(kinds) <= set(shown_markers(html))
    assert lesson_html([]).count("<section") == 0
