"""The quickstart notebook, as a user meets it: opened in JupyterLab, every cell run, the widgets checked.

The notebook is copied unchanged into the server's root; the lab fixture runs the kernel with
`AGENTCELL_MODEL=offline`, the same offline default a fresh machine gets. A screenshot of the main
agent cell is kept in `test-artifacts/quickstart-browser.png`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done

pytestmark = pytest.mark.browser
expect = sync_api.expect

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def _cells() -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in json.loads(QUICKSTART.read_text())["cells"]]


def _index(sources: list[str], start: str) -> int:
    return next(i for i, s in enumerate(sources) if s.startswith(start))


def test_quickstart_runs_in_jupyterlab_with_live_widgets(lab: Lab, page: Any) -> None:
    cells = _cells()
    sources = [source for _, source in cells]
    shutil.copy(QUICKSTART, lab.root / "quickstart.ipynb")
    open_notebook(page, lab, "quickstart.ipynb")
    for index in range(len(sources)):
        run_cell(page, index)  # queued in order, like Run All; markdown cells just render
    # With a person there, nothing in the notebook presses Stop for them (headless, it stops itself).
    stopped = cell(page, _index(sources, "%%agent -o slow_run")).locator(".agentcell")
    expect(stopped).to_have_attribute("data-status", "running", timeout=60_000)
    stopped.locator(".agentcell-stop").click()
    last_code = max(i for i, (kind, _) in enumerate(cells) if kind == "code")
    wait_cell_done(page, last_code)

    main = _index(sources, "%%agent -o run")
    widget = cell(page, main).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "completed", timeout=60_000)
    expect(widget.locator(".agentcell-offline")).to_be_visible()
    tool_card = widget.locator('.agentcell-tool[data-tool="lookup_module"]')
    expect(tool_card).to_have_attribute("data-tool-status", "ok")
    expect(tool_card).to_contain_text("PSYC605")
    answer = widget.locator('.agentcell-answer[data-slot="answer"]')
    expect(answer).to_contain_text("Cognition and Emotion, led by Dr Ada Byron")
    expect(widget.locator(".agentcell-stop")).to_be_disabled()
    cell(page, main).scroll_into_view_if_needed()
    screenshot(page, "quickstart-browser.png")
    widget.locator(".agentcell-teach").click()  # the workshop's teaching view: tool declarations, raw JSON
    expect(widget).to_have_attribute("data-teaching", "true")
    expect(widget.locator(".agentcell-teaching")).to_contain_text("lookup_module")
    widget.locator(".agentcell-teaching").scroll_into_view_if_needed()
    screenshot(page, "quickstart-browser-teaching.png")

    expect(stopped).to_have_attribute("data-status", "stopped")
    expect(stopped.locator('.agentcell-answer[data-slot="answer"]')).to_have_attribute("data-stopped", "true")

    def out(start: str) -> str:
        return str(cell(page, _index(sources, start)).locator(".jp-OutputArea").inner_text())

    assert "widget bundle: ok" in out("import sys")
    # The cell after it ran while the run streamed (queued behind it, as Run All does): it left Stop to the reader.
    assert "press Stop in the widget above" in out("import asyncio")
    result = out("result = await run")
    assert "status: completed" in result and "Cognition and Emotion, led by Dr Ada Byron" in result
    assert "lookup_module" in out("%agent tools")
    assert page.js_errors == []
