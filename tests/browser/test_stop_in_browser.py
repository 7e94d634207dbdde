"""The walking skeleton, end to end: JupyterLab + Chromium, a streaming `%%agent` cell, Stop clicked."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done, wait_for_words

pytestmark = pytest.mark.browser
expect = sync_api.expect


def test_stop_click_stops_streaming_and_keeps_the_partial_answer(lab: Lab, page: Any) -> None:
    lab.write_notebook("stop.ipynb", [
        "%load_ext agentcell",
        "%%agent -o run\nExplain, in several sentences, how a tool-calling loop works.\n[[answer]]",
        "print(run.status, '|', run.answer)",
    ])
    open_notebook(page, lab, "stop.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "running", timeout=30_000)
    expect(widget).to_contain_text("offline")
    answer = widget.locator('.agentcell-answer[data-slot="answer"]')
    # Wait until several words have streamed in, then click Stop mid-stream.
    wait_for_words(answer, 6)
    widget.locator(".agentcell-stop").click()
    expect(widget).to_have_attribute("data-status", "stopped", timeout=5_000)
    shown_at_stop = answer.text_content() or ""
    assert len(shown_at_stop.split()) >= 6
    # Cell 2 awaits the run's result: once its output shows, every message the kernel sent while the run
    # ended (they travel before it on the same channel) has reached the view.
    run_cell(page, 2)
    wait_cell_done(page, 2)
    assert (answer.text_content() or "") == shown_at_stop, "text kept arriving after Stop"
    expect(widget.locator(".agentcell-stop")).to_be_disabled()
    screenshot(page, "stop-in-browser.png")

    out = cell(page, 2).locator(".jp-OutputArea-output").inner_text()
    status, _, partial = out.partition("|")
    assert status.strip() == "stopped"
    assert partial.strip() and shown_at_stop.strip().startswith(partial.strip()[:30])
    assert page.js_errors == []
