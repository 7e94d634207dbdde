""""Edit and re-run from here" in a real JupyterLab + Chromium: keyboard only, the fork's answer below the view.

A scripted model calls `lookup` once and answers with what the tool returned. The test opens the editor on
the finished run's tool result, types a new value, re-runs, and reads the fork's answer in the new output
below the original view; the focus stays on the control, the request is announced once, and axe and the
contrast probe (light and dark) find nothing wrong with the new controls.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, screenshot, sync_api, wait_cell_done
from tests.browser.test_accessibility import MIN_CONTRAST, MIN_FONT_PX, _active_when, _axe, _contrast
from tests.browser.test_accessibility import _theme as _switch_theme

pytestmark = pytest.mark.browser
expect = sync_api.expect

SETUP = r'''
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import FunctionModel, DeltaToolCall
from agentcell import readonly

@readonly
def lookup(code: str) -> str:
    """Look up who leads a course."""
    return "Dr Ada Lovelace"

async def answer_from_tool(messages, info):
    results = [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts
               if isinstance(p, ToolReturnPart)]
    if not results:
        yield {0: DeltaToolCall(name="lookup", json_args='{"code": "PSYC605"}', tool_call_id="c1")}
        return
    yield f"PSYC605 is led by {results[-1]}."

careful = FunctionModel(stream_function=answer_from_tool)
'''


def _theme(page: Any, name: str) -> None:
    """Switch the theme and wait until JupyterLab's splash (shown while it switches) is gone: its removal is a
    timer of JupyterLab's that throws `removeChild` when a second switch's splash is removed first."""
    _switch_theme(page, name)
    page.locator("#jupyterlab-splash").wait_for(state="detached")


def test_edit_a_tool_result_and_re_run_from_here_shows_the_forks_answer_below(lab: Lab, page: Any) -> None:
    lab.write_notebook("fork.ipynb", [
        "%load_ext agentcell\n" + SETUP,
        "%%agent -m careful -o run\nWho leads PSYC605? [[answer|use_tools=true]]",
    ])
    open_notebook(page, lab, "fork.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    views = cell(page, 1).locator(".agentcell")
    original = views.nth(0)
    expect(original).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(original.locator(".agentcell-answer")).to_contain_text("Dr Ada Lovelace")

    edit = original.locator('.agentcell-tool[data-call-id="c1"] .agentcell-fork-edit')
    edit.focus()
    page.keyboard.press("Enter")  # keyboard only: open the editor
    box = original.locator(".agentcell-fork-value")
    expect(box).to_be_visible()
    active = _active_when(page, lambda a: a and a["tag"] == "TEXTAREA")
    assert active["tag"] == "TEXTAREA" and active["inWidget"], active  # the focus moved into the editor
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("Dr Grace Hopper")
    expect(box).to_have_value("Dr Grace Hopper")
    found = {"editor open": _axe(page, original)}
    low: list[Any] = []
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _theme(page, theme)
        low += [m for m in _contrast(page)
                if "fork" in m["where"] and (m["ratio"] < MIN_CONTRAST or m["px"] < MIN_FONT_PX)]
    _theme(page, "JupyterLab Light")
    assert found == {"editor open": []} and low == []
    box.focus()  # changing the theme took the focus to the notebook; the editor kept the typed value
    expect(box).to_have_value("Dr Grace Hopper")
    page.keyboard.press("Tab")  # to "Re-run from here"
    page.keyboard.press("Enter")
    notice = original.locator(".agentcell-notice")
    expect(notice).to_contain_text("re-running from here")
    active = _active_when(page, lambda a: a and "agentcell-fork-edit" in a["cls"])
    assert "agentcell-fork-edit" in active["cls"] and active["callId"] == "c1", active  # focus kept on the control

    expect(views).to_have_count(2, timeout=30_000)  # the fork, in a new output below the original
    fork = views.nth(1)
    expect(fork).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(fork.locator(".agentcell-answer")).to_contain_text("PSYC605 is led by Dr Grace Hopper.")
    header = fork.locator(".agentcell-run-items .agentcell-forked")  # the fork's header line
    expect(header).to_have_text(re.compile(r"^forked from [0-9a-f]{12} at round 1 \(edited: lookup \(c1\)\)$"))
    expect(fork.locator('.agentcell-round[data-round="1"] .agentcell-forked')).to_have_count(1)  # the fork point
    expect(fork.locator('.agentcell-tool[data-call-id="c1"] .agentcell-tool-result')).to_contain_text("Dr Grace Hopper")
    expect(original.locator(".agentcell-answer")).to_contain_text("Dr Ada Lovelace")  # the original is unchanged
    live = page.locator(".agentcell [role=status]:not([hidden]), .agentcell [aria-live]:not([hidden])")
    announced = [t for t in live.all_inner_texts() if "re-running" in t]
    assert len(announced) == 1, announced  # one announcement

    # "Compare with the original" on the finished fork: agentcell.diff's table inside the fork's view.
    compare = fork.locator(".agentcell-compare-btn")
    expect(compare).to_have_text("Compare with the original")
    expect(original.locator(".agentcell-compare-btn")).to_be_hidden()  # the original is no fork
    # Re-run handed the focus back to its button (the original view's render after the fork started); only
    # then does the reader move on to the fork's control.
    expect(original.locator(".agentcell-fork-edit:focus")).to_have_count(1, timeout=30_000)
    compare.focus()
    expect(compare).to_be_focused()
    page.keyboard.press("Enter")
    panel = fork.locator(".agentcell-compare-panel")
    expect(panel).to_be_visible(timeout=30_000)
    expect(compare).to_have_attribute("aria-expanded", "true")
    expect(panel.locator(".agentcell-diff p")).to_contain_text("first differ in [[answer]] round 1, tool result")
    expect(panel.locator(".agentcell-diff p")).to_contain_text("lookup: Dr Grace Hopper")
    expect(panel.locator("tr.agentcell-diff-differs th")).to_contain_text("[[answer]] (differs)")
    active = _active_when(page, lambda a: a and "agentcell-compare-btn" in a["cls"])
    assert "agentcell-compare-btn" in active["cls"] and active["inWidget"], active  # focus kept on the control
    said = [t for t in live.all_inner_texts() if t.startswith("compared with the original")]
    assert said == ["compared with the original: first difference in answer, round 1, tool result"], said
    found = {"comparison open": _axe(page, fork)}
    low = []
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _theme(page, theme)
        low += [m for m in _contrast(page)
                if ("compare" in m["where"] or "diff" in m["where"]) and (m["ratio"] < MIN_CONTRAST or m["px"] < MIN_FONT_PX)]
    _theme(page, "JupyterLab Light")
    assert found == {"comparison open": []} and low == []
    page.emulate_media(reduced_motion="reduce")  # with reduced motion asked for, neither the control nor its table moves
    moving = fork.evaluate("""(root) => [...root.querySelectorAll('.agentcell-compare, .agentcell-compare *')]
        .map((el) => getComputedStyle(el)).filter((s) => s.transitionDuration !== '0s' || s.animationName !== 'none')
        .length""")
    page.emulate_media(reduced_motion="no-preference")
    assert moving == 0

    # The saved notebook keeps the comparison: the fork's static output holds the same table.
    cell(page, 1).click()
    page.keyboard.press("ControlOrMeta+s")
    saved = lab.root / "fork.ipynb"
    deadline = time.monotonic() + 30
    while "agentcell-diff" not in saved.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    outputs = json.loads(saved.read_text())["cells"][1]["outputs"]
    htmls = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    htmls = ["".join(h) if isinstance(h, list) else h for h in htmls]
    assert [h.count("agentcell-diff'") for h in htmls].count(1) == 1, htmls  # the fork's twin, once
    screenshot(page, "fork-in-browser.png")
    assert page.js_errors == []
