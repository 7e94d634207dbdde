"""Every free-text kind (`think`, `poem`, `extract`, `speak`, `text`) is shown as Markdown by every view, as
the live widget shows it, and a list of text as its JSON value: the saved static view, the plain-text view,
the lesson export and the saved teaching view, over the golden run `text-kinds` (a real engine run) and its
hand-checked `text-kinds.shown.json` (the JS twin is js/tests/text-kinds.test.js).

They did not agree: the transcript's text types were `text`/`respond`/`str`, the engine's free-text
kinds five, so a saved notebook or a lesson showed a `think` answer as a JSON string in a `<pre>`."""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentcell.render.html import transcript_html, transcript_text
from agentcell.render.items import as_json, pre
from agentcell.render.lesson import export_lesson
from agentcell.render.markdown import markdown_html
from agentcell.render.teaching.model import lesson_slot
from agentcell.transcript import Transcript

FIXTURES = Path(__file__).parents[1] / "fixtures" / "transcripts"
EVENTS: list[dict[str, Any]] = json.loads((FIXTURES / "text-kinds.events.json").read_text(encoding="utf-8"))
SHOWN: dict[str, dict[str, Any]] = json.loads((FIXTURES / "text-kinds.shown.json").read_text(encoding="utf-8"))["slots"]
TEXT_LIKE = {"think", "poem", "extract", "speak", "text"}


def transcript() -> Transcript:
    return Transcript.from_wire(EVENTS)


def test_the_fixture_has_each_text_like_kind_and_a_list_of_text() -> None:
    types = {slot.name: slot.type for slot in transcript().slots.values()}
    assert set(types) == set(SHOWN)
    assert {types[name] for name, how in SHOWN.items() if how["as"] == "markdown"} == TEXT_LIKE
    assert types["steps"] == "think{2}"


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.add(tag)


def _tags(fragment: str) -> set[str]:
    parser = _Tags()
    parser.feed(fragment)
    return parser.tags


def _sections(page: str) -> dict[str, str]:
    found = re.findall(r'<section class="ac-slot" data-slot="([^"]+)"[^>]*>(.*?)</section>', page, re.S)
    return dict(found)


def _assert_shown_as_the_widget_shows(page: str) -> None:
    sections = _sections(page)
    assert set(sections) == set(SHOWN)
    for name, how in SHOWN.items():
        answer = re.search(r'<div class="ac-answer">(.*)</div>', sections[name], re.S)
        assert answer is not None, name
        if how["as"] == "markdown":
            assert answer.group(1) == markdown_html(how["text"]), name
            assert set(how["elements"]) <= _tags(answer.group(1)), name
            assert "<pre" not in sections[name], name
        else:
            assert answer.group(1) == pre(as_json(how["value"])), name


def test_the_saved_view_shows_free_text_as_markdown() -> None:
    _assert_shown_as_the_widget_shows(transcript_html(transcript()))


def test_the_plain_text_view_shows_free_text_as_written() -> None:
    lines = transcript_text(transcript()).split("\n")
    for how in SHOWN.values():
        if how["as"] == "markdown":
            assert how["text"] in "\n".join(lines)
            assert json.dumps(how["text"]) not in lines
        else:
            assert as_json(how["value"]) in "\n".join(lines)


def test_the_lesson_export_shows_free_text_as_markdown(tmp_path: Path) -> None:
    page = export_lesson(tmp_path / "lesson.html", ("kinds", transcript())).read_text(encoding="utf-8")
    _assert_shown_as_the_widget_shows(page)


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_the_teaching_view_gives_the_answer_as_written(name: str) -> None:
    tr = transcript()
    answer = lesson_slot(tr, tr.slots[name]).rounds[-1].model["answer"]
    how = SHOWN[name]
    assert answer == (how["text"] if how["as"] == "markdown" else json.dumps(how["value"], ensure_ascii=False))


def test_a_kept_list_of_text_stays_a_json_value_after_a_resume() -> None:
    """A resumed run starts again (`run_started`): its slot list must say `think{2}`, not `think`, or the kept
    list would be shown as free text (its JSON as Markdown) by every view."""
    import asyncio

    from agentcell.engine import start_run
    from agentcell.events import Event, TokenDelta
    from agentcell.events.json import to_wire
    from tests.engine.conftest import Final, Script, Sleep

    async def both_segments() -> list[Event]:
        script = Script([Final(["look", "answer"])], ["partial ", Sleep(30), "never"], ["All **done**."])
        run = start_run("Two steps. [[think{2}:steps]]\nSum up. [[text:t]]", model=script.model, journal=False)
        events: list[Event] = []
        async for event in run.events():
            events.append(event)
            if isinstance(event, TokenDelta):
                run.cancel()
        await run
        second = run.resume()
        events += [e async for e in second.events()]
        await second
        return events

    wire = [to_wire(event, t=0.01 * i) for i, event in enumerate(asyncio.run(both_segments()))]
    starts = [ev for ev in wire if ev["kind"] == "run_started"]
    assert len(starts) == 2 and all(ev["slots"][0]["type"] == "think{2}" for ev in starts)
    tr = Transcript.from_wire(wire)
    assert tr.slots["steps"].kept and tr.slots["steps"].type == "think{2}"
    sections = _sections(transcript_html(tr))
    assert pre(as_json(["look", "answer"])) in sections["steps"]
    assert markdown_html("All **done**.") in sections["t"]
