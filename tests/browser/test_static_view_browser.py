"""The saved (static) transcript in Chromium: Markdown rendered like the live view — every free-text slot
kind, in the live widget, the saved notebook and the lesson export alike —, and the same 39 XSS payloads
the widget's sanitizer is tested with (tests/fixtures/xss-payloads.json) do nothing — in the answer, in a
tool's arguments and result, in thinking and in a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from agentcell.render.html import render_html
from tests.browser.lab import (
    ARTIFACTS,
    Lab,
    cell,
    dismiss_kernel_dialog,
    open_notebook,
    run_cell,
    settled,
    sync_api,
    wait_cell_done,
)

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
    settled(page)  # any handler that could fire (onload, onerror, ontoggle) or fetch has done so
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
                    "display_data", data={"text/html": render_html(events), "text/plain": answer})]),
                # The control: an HTML output rendered after it, whose math JupyterLab does typeset.
                nbformat.v4.new_code_cell("control", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/html": "<p class='control'>typeset: $z^2$</p>", "text/plain": "z"})])]
    NotebookNotary().sign(nb)  # trusted, like a notebook JupyterLab saved itself
    nbformat.write(nb, lab.root / "dollars.ipynb")
    page.goto(lab.url("lab/tree/dollars.ipynb"))
    dismiss_kernel_dialog(page)
    expect(page.locator(".jp-MarkdownCell mjx-container")).to_have_count(1, timeout=30_000)  # MathJax is loaded
    static = page.locator(".agentcell-static")
    expect(static.locator(".ac-answer")).to_have_text(answer)
    # Outputs are typeset as they render, in order: once the control after it is typeset, so would it be.
    expect(page.locator(".jp-OutputArea-output mjx-container")).to_have_count(1, timeout=30_000)
    assert static.locator("mjx-container").count() == 0
    assert "$5 and $10" in static.inner_text()


SHOWN: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "transcripts" / "text-kinds.shown.json").read_text())["slots"]
KINDS = {"notes": "think", "p": "poem", "e": "extract", "s": "speak", "t": "text"}
CUES = {"notes": "Plan.", "p": "A poem.", "e": "Quote who", "s": "Say hello.", "t": "Sum up."}
KINDS_CELL = ("%%agent -o kinds -m kinds_model\nQuote: **Dr Ada Byron** leads PSYC605.\nPlan. [[think:notes]]\n"
              "A poem. [[poem:p]]\nQuote who leads it. [[extract:e]]\nSay hello. [[speak:s]]\nSum up. [[text:t]]")
KINDS_SETUP = """
from pydantic_ai.models.function import FunctionModel
ANSWERS = {answers!r}

async def fn(messages, info):  # each slot's answer, found by the words of its own prompt
    asked = " ".join(str(getattr(part, "content", "")) for part in messages[-1].parts)
    yield next(text for cue, text in ANSWERS.items() if cue in asked)

kinds_model = FunctionModel(stream_function=fn)
"""
# What a reader sees of each answer: its Markdown elements and its words (wrappers a view adds left out).
SHAPE = """([root, roots]) => Object.fromEntries(Object.entries(roots).map(([name, sel]) => {
  const el = (root ?? document).querySelector(sel);
  if (!el) return [name, null];
  const tags = new Set([...el.querySelectorAll("p, ul, ol, li, strong, em, h1, h2, h3, pre, code, a")]
    .map((e) => e.tagName.toLowerCase()));
  return [name, {tags: [...tags].sort(), text: el.textContent.replace(/\\s+/g, " ").trim()}];
}))"""


def _shapes(page: Any, selector: str, root: Any = None) -> dict[str, Any]:
    shapes: dict[str, Any] = page.evaluate(SHAPE, [root, {name: selector.format(name=name) for name in KINDS}])
    return shapes


def test_every_free_text_kind_reads_the_same_live_saved_and_in_the_lesson(lab: Lab, page: Any) -> None:
    """[[think]], [[poem]], [[extract]], [[speak]] and [[text]] answers in Markdown: the live widget, the static
    view saved in the notebook and the lesson export (`%agent export … lesson.html`) show the same elements and
    words for each; the saved and exported views showed four of them as a quoted string in a <pre>."""
    answers = {CUES[name]: SHOWN[name]["text"] for name in KINDS}
    lab.write_notebook("kinds.ipynb", ["%load_ext agentcell", KINDS_SETUP.format(answers=answers), KINDS_CELL,
                                       "%agent export kinds kinds-lesson.html"])
    open_notebook(page, lab, "kinds.ipynb")
    for i in (0, 1, 2):
        run_cell(page, i)
        wait_cell_done(page, i)
    widget = cell(page, 2).locator(".agentcell").first
    expect(widget).to_have_attribute("data-status", "completed", timeout=60_000)
    expect(cell(page, 2).locator(".agentcell-static")).to_have_attribute("data-status", "completed")
    live = _shapes(page, '.agentcell-answer[data-slot="{name}"] .agentcell-markdown', widget.element_handle())
    run_cell(page, 3)
    wait_cell_done(page, 3)
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    saved = nbformat.read(lab.root / "kinds.ipynb", as_version=4)
    twin = next(o.data["text/html"] for o in saved.cells[2].outputs if "text/html" in o.get("data", {}))
    (lab.root / "kinds-saved.html").write_text(f"<!doctype html><meta charset=utf-8><body>{twin}</body>")
    page.goto((lab.root / "kinds-saved.html").as_uri())
    in_saved = _shapes(page, '.agentcell-static section[data-slot="{name}"] .ac-answer')
    page.goto((lab.root / "kinds-lesson.html").as_uri())
    in_lesson = _shapes(page, '.agentcell-static section[data-slot="{name}"] .ac-answer')

    for name in KINDS:
        assert live[name] is not None, name
        assert set(SHOWN[name]["elements"]) <= set(live[name]["tags"]), (name, live[name])
        assert "pre" not in live[name]["tags"] and "**" not in live[name]["text"], (name, live[name])
    assert in_saved == live
    assert in_lesson == live
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "text-kinds-lesson.png"), full_page=True)
