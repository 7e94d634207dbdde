"""A run whose kernel is restarted mid-stream says so: the view stops its clock, disables Stop and keeps the words."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done, wait_for_words

pytestmark = pytest.mark.browser
expect = sync_api.expect

KERNEL_READY = (
    "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
    " return k && k.status === 'idle' && k.connectionStatus === 'connected'; }"
)


def test_a_kernel_restart_mid_run_shows_the_run_lost_with_stop_disabled_and_the_clock_stopped(
    lab: Lab, page: Any
) -> None:
    lab.write_notebook("restart.ipynb", [
        "%load_ext agentcell",
        "%%agent -o run -m offline:slow\nExplain, in several sentences, how a tool-calling loop works.\n[[answer]]",
    ])
    open_notebook(page, lab, "restart.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "running", timeout=30_000)
    answer = widget.locator('.agentcell-answer[data-slot="answer"]')
    wait_for_words(answer, 4)

    # What Kernel → Restart does, without its confirmation dialog.
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")

    expect(widget).to_have_attribute("data-status", "lost", timeout=15_000)
    status = widget.locator(".agentcell-status")
    expect(status).to_have_text(
        re.compile(r"^kernel restarted — this run was lost; \d+ words kept$"), timeout=5_000)
    kept = int((status.text_content() or "").split("; ")[1].split()[0])
    assert kept >= 4
    expect(widget.locator(".agentcell-stop")).to_be_disabled()
    clock = widget.locator(".agentcell-elapsed").text_content()
    # The new kernel coming up takes seconds, many of the widget's 250 ms clock ticks: the clock did not move.
    page.wait_for_function(KERNEL_READY, timeout=60_000)
    expect(widget.locator(".agentcell-elapsed")).to_have_text(clock or "")
    assert widget.get_attribute("data-status") == "lost"
    assert (status.text_content() or "").count("kernel restarted") == 1
    screenshot(page, "kernel-restart-lost.png")
    assert page.js_errors == []

