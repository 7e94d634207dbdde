"""The saved static view and the lesson export embed each image's thumbnail as a data URI (no network)."""

from __future__ import annotations

import json
from pathlib import Path

from agentcell.render.html import transcript_html
from agentcell.render.lesson import lesson_html
from agentcell.render.output import static_transcript
from agentcell.transcript import Transcript

EVENTS = json.loads((Path(__file__).parents[1] / "fixtures" / "transcripts" / "media.events.json").read_text())
THUMB = next(e["thumb"] for e in EVENTS if e["kind"] == "media_added" and e["thumb"])


def test_the_static_view_shows_every_thumbnail_inline() -> None:
    html = transcript_html(Transcript.from_wire(EVENTS))
    assert html.count(f'src="{THUMB}"') == 3
    assert "a 8×4 PNG (pic) — sent with the prompt" in html
    assert "http" not in html.split('src="', 1)[1].split('"', 1)[0]


def test_the_text_view_names_the_images() -> None:
    text = static_transcript(Transcript.from_wire(EVENTS)).text
    assert "[a 8×4 PNG (pic) — sent with the prompt]" in text


def test_the_lesson_embeds_them_too() -> None:
    html = lesson_html([("media", Transcript.from_wire(EVENTS))])
    assert f'src="{THUMB}"' in html
    assert "src=\"http" not in html


def test_a_thumbnail_that_is_not_an_image_data_uri_is_dropped() -> None:
    hostile = [{**e, "thumb": 'javascript:alert(1)" onerror="x'} if e.get("thumb") else e for e in EVENTS]
    html = transcript_html(Transcript.from_wire(hostile))
    assert "<img" not in html and "javascript:" not in html
