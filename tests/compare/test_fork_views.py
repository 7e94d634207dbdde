"""The fork point in the Python views (the static transcript and the teaching lesson), on the golden `fork` run."""

from __future__ import annotations

import json
from pathlib import Path

from agentcell.render.html import transcript_text
from agentcell.render.teaching.model import lesson_slot
from agentcell.transcript import Transcript

FORK = Path(__file__).parents[1] / "fixtures" / "transcripts" / "fork.events.json"


def test_the_static_text_says_where_the_fork_comes_from() -> None:
    tr = Transcript.from_wire(json.loads(FORK.read_text()))
    text = transcript_text(tr, {})
    assert "forked from original at round 1 (edited: lookup (k1))" in text


def test_the_teaching_lesson_marks_the_fork_point_in_the_last_kept_round() -> None:
    tr = Transcript.from_wire(json.loads(FORK.read_text()))
    lesson = lesson_slot(tr, tr.slots["b"])
    assert [[m["kind"] for m in r.markers] for r in lesson.rounds] == [["fork_point"], []]
    assert lesson.rounds[0].markers[0]["text"] == "forked from original at round 1 (edited: lookup (k1))"
