"""The saved (static) transcript in Chromium: Markdown rendered like the live view, and the same 39
XSS payloads the widget's sanitizer is tested with (tests/fixtures/xss-payloads.json) do nothing —
in the answer, in a tool's arguments and result, in thinking and in a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from agentcell.render.html import render_html
from tests.browser.lab import ARTIFACTS, Lab, dismiss_kernel_dialog, sync_api

pytestmark = pytest.mark.browser
expect = sync_api.expect

PAYLOADS: list[str] = json.loads((Path(__file__).parents[1] / "fixtures" / "xss-payloads.json").read_text())
R = "static-xss"


def _events() -> list[dict[str, Any]]:
    hostile = "\n\n".join(p.replace("globalThis.", "window.") for p in PAYLOADS)
    answer = f"## Who leads PSYC605\n\n```python\nprint('<b>not bold</b>')\n```\n\n{hostile}"
    return [
        {"kind": "run_started", "run_id": R, "model": "m", "slots": [{"name": "answer", "type": "text"}], "t": 0},
        {"kind": "slot_started", "run_id": R, "slot": "answer", "slot_type": "text", "index": 0, "t": 0.1},
        {"kind": "thinking_delta", "run_id": R, "slot": "answer", "text": hostile, "round": 1, "t": 0.2},
        {"kind": "tool_started", "run_id": R, "slot": "answer", "call_id": "c1", "tool_name": PAYLOADS[2],
         "args": {"q": PAYLOADS[0]}, "round": 1, "t": 0.3},
        {"kind": "tool_completed", "run_id": R, "slot": "answer", "call_id": "c1", "tool_name": PAYLOADS[2],
         "ok": True, "result": hostile, "round": 1, "t": 0.4},
        {"kind": "run_warning", "run_id": R, "slot": None, "message": PAYLOADS[4], "t": 0.5},
        {"kind": "token_delta", "run_id": R, "slot": "answer", "text": answer, "round": 2, "t": 0.6},
        {"kind": "slot_completed", "run_id": R, "slot": "answer", "value": answer, "t": 0.7},
        {"kind": "processing_complete", "run_id": R, "status": "completed", "answer": answer, "t": 0.8},
    ]


def test_static_transcript_renders_markdown_and_no_payload_runs(page: Any, tmp_path: Path) -> None:
    assert len(PAYLOADS) == 39
    path = tmp_path / "saved.html"
    path.write_text(f"<!doctype html><meta charset=utf-8><body>{render_html(_events())}</body>")
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_timeout(500)  # let any handler that could fire (onload, onerror, ontoggle) do so
    static = page.locator(".agentcell-static")
    assert static.locator(".ac-answer h2").inner_text() == "Who leads PSYC605"
    assert "print('<b>not bold</b>')" in static.locator(".ac-answer pre code").first.inner_text()
    assert page.evaluate("() => window.__pwned ?? null") is None
    assert dialogs == []
    assert [u for u in requests if not u.startswith("file://")] == []  # nothing loaded from anywhere
    # Every payload is on the page as text, somewhere a reader can see what the model sent.
    text = static.inner_text()
    assert PAYLOADS[0].replace("globalThis.", "window.") in text
    dangerous = "script, iframe, object, embed, form, meta, base, link, svg, math, input, button, img, video"
    assert static.locator(dangerous).count() == 0
    handlers = page.evaluate(
        "() => [...document.querySelectorAll('.agentcell-static *')].flatMap(el => [...el.attributes]"
        ".filter(a => a.name.startsWith('on') || /javascript:/i.test(a.value)).map(a => a.name))")
    assert handlers == []
    ARTIFACTS.mkdir(exist_ok=True)
    static.screenshot(path=str(ARTIFACTS / "static-xss.png"))


def test_jupyterlab_does_not_typeset_dollar_signs_in_a_saved_transcript(lab: Lab, page: Any) -> None:
    """JupyterLab typesets HTML outputs with MathJax; the live view renders no math, so neither does its twin:
    "$5 and $10" stays as the model wrote it (a Markdown cell's `$y^2$` beside it shows MathJax ran)."""
    answer = "It costs $5 and $10, and $x^2$ stays as typed."
    events = [
        {"kind": "run_started", "run_id": "m", "model": "m", "slots": [{"name": "answer", "type": "text"}], "t": 0},
        {"kind": "slot_started", "run_id": "m", "slot": "answer", "slot_type": "text", "index": 0, "t": 0.1},
        {"kind": "token_delta", "run_id": "m", "slot": "answer", "text": answer, "round": 1, "t": 0.2},
        {"kind": "slot_completed", "run_id": "m", "slot": "answer", "value": answer, "t": 0.3},
        {"kind": "processing_complete", "run_id": "m", "status": "completed", "answer": answer, "t": 0.4},
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("Math shows here: $y^2$"),
                nbformat.v4.new_code_cell("%%agent\nPrices?\n[[answer]]", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/html": render_html(events), "text/plain": answer})])]
    NotebookNotary().sign(nb)  # trusted, like a notebook JupyterLab saved itself
    nbformat.write(nb, lab.root / "dollars.ipynb")
    page.goto(lab.url("lab/tree/dollars.ipynb"))
    dismiss_kernel_dialog(page)
    expect(page.locator(".jp-MarkdownCell mjx-container")).to_have_count(1, timeout=30_000)  # MathJax is loaded
    static = page.locator(".agentcell-static")
    expect(static.locator(".ac-answer")).to_have_text(answer)
    page.wait_for_timeout(500)  # an output's typesetting would have landed by now
    assert static.locator("mjx-container").count() == 0
    assert "$5 and $10" in static.inner_text()
