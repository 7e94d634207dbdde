"""The incremental Markdown answer in a real JupyterLab + Chromium (js/src/render/answer.js).

A long Markdown answer streams in; its first paragraph uses a reference link whose definition is the
answer's very last line. At the end the link must resolve (the chunk that uses it is rendered again),
every block must be there once, and a reloaded page — whose view renders the whole answer at once
from the `final` trait, a slice per task — must show the same thing.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, sync_api, wait_cell_done

pytestmark = pytest.mark.browser
expect = sync_api.expect

SECTIONS = 150

SETUP = r'''
import asyncio
from pydantic_ai.models.function import FunctionModel

def answer_text(n):
    parts = ["Read [the guide] first.\n\n"]
    for i in range(n):
        parts.append(f"## Part {i}\n\nStep {i} with *emphasis* and `code`.\n\n- a {i}\n- b {i}\n\n"
                     f"```python\nprint({i})\n```\n\n| k | v |\n|---|---|\n| {i} | {i * 2} |\n\n")
    parts.append("[The Guide]: https://example.org/guide\n")
    return "".join(parts)

def streamed(text):
    pieces = [text[i:i + 40] for i in range(0, len(text), 40)]
    async def fn(messages, info):
        for k, piece in enumerate(pieces):
            if k % 20 == 0:
                await asyncio.sleep(0.005)
            yield piece
    return FunctionModel(stream_function=fn)

md_model = streamed(answer_text(SECTIONS))
'''

SHAPE = """(el) => {
  const md = el.querySelector('.agentcell-answer[data-slot="answer"] .agentcell-markdown');
  return {
    guide: [...md.querySelectorAll('a[href="https://example.org/guide"]')].map((a) => a.textContent),
    h2: md.querySelectorAll('h2').length,
    code: md.querySelectorAll('pre code').length,
    rows: md.querySelectorAll('td').length,
    items: md.querySelectorAll('li').length,
    groups: md.querySelectorAll('.agentcell-md-group').length,
    pending: md.querySelectorAll('.agentcell-md-tail[data-pending]').length,
    text: md.textContent.replace(/\\s+/g, ' ').trim(),
  };
}"""


def _shape(page: Any, index: int) -> dict[str, Any]:
    widget = cell(page, index).locator(".agentcell")
    # Wait until nothing is left to render (a reloaded view renders a slice per task).
    page.wait_for_function(
        "(i) => { const c = document.querySelectorAll('.jp-Notebook .jp-Cell')[i];"
        " const md = c && c.querySelector('.agentcell-answer[data-slot=\"answer\"] .agentcell-markdown');"
        " return !!md && md.querySelector('.agentcell-md-tail[data-pending]') === null"
        " && md.querySelectorAll('pre code').length > 0; }", arg=index, timeout=30_000)
    shape: dict[str, Any] = page.evaluate(SHAPE, widget.element_handle())
    return shape


def test_long_answer_final_render_resolves_late_references_and_survives_a_reload(lab: Lab, page: Any) -> None:
    lab.write_notebook("markdown.ipynb", ["%load_ext agentcell", f"SECTIONS = {SECTIONS}\n{SETUP}",
                                          "%%agent -m md_model\nWrite the guide.\n[[answer]]"])
    open_notebook(page, lab, "markdown.ipynb")
    for i in (0, 1):
        run_cell(page, i)
        wait_cell_done(page, i)
    run_cell(page, 2)
    widget = cell(page, 2).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "completed", timeout=120_000)
    live = _shape(page, 2)
    assert live["guide"] == ["the guide"]  # defined on the last line, used in the first chunk
    assert (live["h2"], live["code"], live["rows"], live["items"]) == (SECTIONS, SECTIONS, 2 * SECTIONS, 2 * SECTIONS)
    assert live["groups"] >= 2
    assert "[The Guide]" not in live["text"]

    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    page.reload()
    page.wait_for_function(
        "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
        " return k && k.connectionStatus === 'connected'; }", timeout=60_000)
    expect(cell(page, 2).locator(".agentcell")).to_have_attribute("data-status", "completed", timeout=30_000)
    assert _shape(page, 2) == live
    assert page.js_errors == []
