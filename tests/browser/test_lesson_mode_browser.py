"""Lesson mode in a real JupyterLab + Chromium: a stepped run driven with the keyboard alone (one prediction
made with the arrow keys, Next and Run to end with Enter), axe-core finding no violation while it is paused,
and the teaching view showing the cell it came from."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, sync_api, wait_cell_done
from tests.browser.test_accessibility import _axe, _open_all_details

pytestmark = pytest.mark.browser
expect = sync_api.expect

SETUP = '''
%load_ext agentcell
from agentcell import readonly

@readonly
def lookup(code: str) -> str:
    """Look a module up by its code."""
    return f"{code}: Research Methods, led by Dr Ada Lovelace."

code = "PSYC605"
'''
STEPPED = "%%agent -o h -m offline:fast -t lookup --predict\nWho leads {{ code }}?\n[[answer|use_tools=true]]"


def _focused(page: Any) -> dict[str, Any]:
    return page.evaluate("""() => { const a = document.activeElement;
        return {tag: a?.tagName, text: (a?.textContent || '').trim(), value: a?.value ?? null,
                inBar: !!a?.closest('.ac-stepper')}; }""")


def test_a_stepped_run_is_driven_by_the_keyboard_alone(lab: Lab, page: Any) -> None:
    lab.write_notebook("lesson-step.ipynb", [SETUP, STEPPED, "h.result().predictions"])
    open_notebook(page, lab, "lesson-step.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    bar = widget.locator(".ac-stepper")
    expect(bar).to_be_visible(timeout=30_000)
    expect(bar.locator(".ac-step-summary")).to_contain_text("paused before request 1: ")
    expect(bar.locator(".ac-step-summary")).to_contain_text("1 tool offered")
    expect(bar.locator(".ac-step-body pre")).to_contain_text("Who leads PSYC605?")

    # axe while paused (the prediction asked, the request body in view), teaching view open too
    widget.locator(".agentcell-teach").click()
    expect(widget.locator(".ac-source-template")).to_have_text("Who leads {{ code }}?\n[[answer|use_tools=true]]")
    _open_all_details(widget)
    assert _axe(page, widget) == []

    # keyboard alone from here: the focus starts on Next; Shift+Tab goes back to the question's choices
    bar.locator(".ac-step-next").focus()
    page.keyboard.press("Shift+Tab")  # the tool list
    page.keyboard.press("Shift+Tab")  # "both"
    page.keyboard.press("Shift+Tab")  # "call a tool"
    assert _focused(page)["text"] == "call a tool"
    page.keyboard.press("Enter")
    expect(bar.locator(".ac-guess-said")).to_have_text("Your guess: tool (lookup). Press Next to see.")
    assert _focused(page)["text"] == "call a tool"  # the rebuilt question keeps the focus
    page.keyboard.press("Tab")  # "both"
    page.keyboard.press("Tab")  # the tool list
    page.keyboard.press("Tab")  # Next
    assert _focused(page)["text"] == "Next"
    page.keyboard.press("Enter")
    expect(bar.locator(".ac-step-summary")).to_have_text("paused before lookup(code='PSYC605')", timeout=30_000)
    expect(bar.locator(".ac-guess-verdict")).to_contain_text("was right")
    assert _focused(page)["text"] == "Next"  # the focus stayed on Next
    assert _axe(page, widget) == []
    page.keyboard.press("Enter")
    expect(bar.locator(".ac-step-summary")).to_contain_text("paused before request 2", timeout=30_000)
    page.keyboard.press("Tab")  # Run to end
    assert _focused(page)["text"] == "Run to end"
    page.keyboard.press("Enter")
    expect(widget).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(bar).to_be_hidden()
    run_cell(page, 2)
    wait_cell_done(page, 2)
    expect(cell(page, 2)).to_contain_text("'right': True")
    assert page.js_errors == []
