"""A deliberate Stop is said once, by the status: the saved view has no "error: stopped" line and marks the kept
text "partial answer", while a real failure still shows its error."""

from __future__ import annotations

from typing import Any

from agentcell.render.html import render_html, render_text

R = "stop"


def _events(status: str, error: str) -> list[dict[str, Any]]:
    return [
        {"kind": "run_started", "run_id": R, "model": "m", "slots": [{"name": "answer", "type": "text"}], "t": 0},
        {"kind": "slot_started", "run_id": R, "slot": "answer", "slot_type": "text", "index": 0, "t": 0.1},
        {"kind": "token_delta", "run_id": R, "slot": "answer", "text": "Dr Ada le", "round": 1, "t": 0.2},
        {"kind": "slot_failed", "run_id": R, "slot": "answer", "status": status, "error": error, "partial": "Dr Ada le",
         "t": 0.3},
        {"kind": "processing_complete", "run_id": R, "status": status, "t": 0.4},
    ]


def test_a_stopped_run_says_stopped_without_an_error_line() -> None:
    text = render_text(_events("stopped", "stopped"))
    page = render_html(_events("stopped", "stopped"))
    assert "error: stopped" not in text
    assert 'class="ac-error"' not in page
    assert "partial answer" in page and "partial answer — stopped" not in page


def test_a_failed_run_still_shows_its_error() -> None:
    text = render_text(_events("failed", "ConnectionError: the server went away"))
    page = render_html(_events("failed", "ConnectionError: the server went away"))
    assert "error: ConnectionError: the server went away" in text
    assert 'class="ac-error">ConnectionError: the server went away' in page
    assert "partial answer — failed" in page
