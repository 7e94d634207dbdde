"""The live widget in a real JupyterLab + Chromium: every element, hostile text, approvals, reload,
the saved notebook without a kernel, and light/dark screenshots (kept in test-artifacts/)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser.lab import (
    ARTIFACTS,
    Lab,
    cell,
    dismiss_kernel_dialog,
    open_notebook,
    painted,
    run_cell,
    screenshot,
    settled,
    sync_api,
    wait_cell_done,
    wait_for_words,
)

pytestmark = pytest.mark.browser
expect = sync_api.expect

# A scripted pydantic-ai model defined in the notebook: round 1 thinks, narrates (then retracted as
# "gathering") and calls `lookup`; round 2 streams a Markdown answer word by word.
SETUP = r'''
import asyncio, agentcell
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import FunctionModel, DeltaThinkingPart, DeltaToolCall
from agentcell import readonly

LOOKUP_RESULT = "PSYC605: Research Methods, led by Dr Ada Lovelace."

@readonly
def lookup(code: str) -> str:
    """Look up who leads a course."""
    return LOOKUP_RESULT

def scripted(answer, *, thinking="I should look the course up.", narration="Let me check the records. ",
             args='{"code": "PSYC605"}', delay=0.02):
    async def fn(messages, info):
        done = any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
        if not done:
            yield {99: DeltaThinkingPart(content=thinking)}
            yield narration
            yield {0: DeltaToolCall(name="lookup", json_args=args, tool_call_id="c1")}
            return
        for word in answer.split(" "):
            await asyncio.sleep(delay)
            yield word + " "
    return FunctionModel(stream_function=fn)

def show(answer, **kw):
    return agentcell.show("Who leads PSYC605? [[answer|use_tools=true, max_iter=3]]", model=scripted(answer, **kw),
                          tools=[lookup])
'''

ANSWER = ("## Who leads PSYC605\n\n**Dr Ada Lovelace** leads *Research Methods*.\n\n"
          "- taught in autumn\n- 20 credits\n\n```\nenrol PSYC605\n```\n\n"
          "See [the handbook](https://example.org/psyc605).")

XSS = [
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='a'\">a link</a>",
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "<details open ontoggle=\"window.__pwned='toggle'\">x</details>",
    "<style>.agentcell{display:none}</style>",
    "![x](x\" onerror=\"window.__pwned='mdimg')",
    "<form><button formaction=\"javascript:window.__pwned='form'\">go</button></form>",
    "<math><mi xlink:href=\"javascript:window.__pwned='math'\">m</mi></math>",
    "<div onmouseover=\"window.__pwned='hover'\">hover me</div>",
    "<script>alert('pwned')</script>",
]


def _notebook(lab: Lab, name: str, cells: list[str]) -> None:
    lab.write_notebook(name, cells)


END_T = "print(w.final[-1]['t'])"
"""Prints the kernel-clock time (seconds since the run started) of the run's last event."""


def _seconds(locator: Any) -> float:
    """The number a `.agentcell-elapsed` element shows ("3.3 s")."""
    return float(re.sub(r"[^\d.]", "", locator.inner_text()))


def _words(locator: Any) -> int:
    return len((locator.text_content() or "").split())


def _theme(page: Any, name: str) -> None:
    page.evaluate("(t) => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme: t}); }", name)
    light = "true" if "Light" in name else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
    painted(page)  # the theme's stylesheet is in (JupyterLab sets the flag once it loaded); now it is applied


def test_a_run_renders_every_element_and_is_screenshotted_in_light_and_dark(lab: Lab, page: Any) -> None:
    _notebook(lab, "elements.ipynb", [SETUP, f"w = show({ANSWER!r}, delay=0.05)\nw", END_T])
    open_notebook(page, lab, "elements.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    answer = widget.locator('.agentcell-answer[data-slot="answer"]')
    # Streaming: part of the answer is on screen while the run is still going.
    expect(widget).to_have_attribute("data-status", "running")
    wait_for_words(answer, 3)
    assert widget.get_attribute("data-status") == "running"
    # Meters mid-stream: the slot's own ceiling (max_iter=3), the answering request counted while it
    # streams, output tokens moving as an estimate until the provider's count arrives.
    meter = widget.locator(".agentcell-meter-requests")
    assert (meter.get_attribute("data-limit"), meter.get_attribute("data-used")) == ("3", "2")
    assert widget.locator(".agentcell-tokens").get_attribute("data-estimated") == "true"
    expect(widget.locator(".agentcell-meter-scope").first).to_have_text("slot answer:")
    expect(widget).to_have_attribute("data-status", "completed", timeout=30_000)
    # Header: model, status, elapsed, meter.
    expect(widget.locator(".agentcell-model")).to_have_text("function::fn")
    expect(widget.locator(".agentcell-status")).to_contain_text("done")
    # Elapsed, frozen at the end, is the kernel's clock at the run's last event (not the browser's).
    run_cell(page, 2)
    wait_cell_done(page, 2)
    end_t = float(cell(page, 2).locator(".jp-OutputArea-output").inner_text())
    assert abs(_seconds(widget.locator(".agentcell-elapsed")) - end_t) <= 0.05 + 1e-9  # shown to 0.1 s
    expect(widget.locator(".agentcell-meter-requests")).to_have_attribute("data-used", "2")
    expect(widget.locator(".agentcell-meter-tools")).to_have_attribute("data-used", "1")
    # Timeline: thinking (collapsible), the retracted narration with its reason, the tool card.
    thinking = widget.locator(".agentcell-thinking")
    expect(thinking).to_have_count(1)
    thinking.locator("summary").click()
    expect(thinking).to_contain_text("I should look the course up.")
    narration = widget.locator('.agentcell-narration[data-reason="gathering"]')
    expect(narration).to_contain_text("Let me check the records.")
    tool = widget.locator('.agentcell-tool[data-tool="lookup"]')
    expect(tool).to_have_attribute("data-tool-status", "ok")
    expect(tool.locator(".agentcell-tool-args")).to_contain_text('"code": "PSYC605"')
    expect(tool.locator(".agentcell-tool-result")).to_contain_text("led by Dr Ada Lovelace")
    expect(tool.locator(".agentcell-tool-duration")).to_be_visible()
    # The answer as Markdown: heading, bold, list, a safe link; the narration is not in it.
    md = answer.locator(".agentcell-markdown")
    expect(md.locator("h2")).to_have_text("Who leads PSYC605")
    expect(md.locator("strong")).to_have_text("Dr Ada Lovelace")
    expect(md.locator("li")).to_have_count(2)
    link = md.locator("a")
    expect(link).to_have_attribute("href", "https://example.org/psyc605")
    assert "noopener" in (link.get_attribute("rel") or "")
    assert "Let me check" not in (answer.text_content() or "")
    expect(widget.locator(".agentcell-stop")).to_be_disabled()
    # The static twin (for readers without a kernel) arrived, and is hidden next to the live view.
    static = cell(page, 1).locator(".agentcell-static")
    expect(static).to_have_attribute("data-status", "completed")
    expect(static).to_be_hidden()
    expect(widget).to_be_visible()
    # Teaching view toggle and export controls are reachable buttons.
    expect(widget.locator(".agentcell-teach")).to_have_attribute("aria-pressed", "false")
    expect(widget.locator(".agentcell-export-format")).to_have_value("openai")
    widget.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    widget.screenshot(path=str(ARTIFACTS / "widget-light.png"))
    _theme(page, "JupyterLab Dark")
    widget.screenshot(path=str(ARTIFACTS / "widget-dark.png"))
    bg = page.evaluate("(el) => getComputedStyle(el).color", widget.element_handle())
    _theme(page, "JupyterLab Light")
    assert bg != page.evaluate("(el) => getComputedStyle(el).color", widget.element_handle()), "not themed"
    assert page.js_errors == []


def test_hostile_model_and_tool_text_never_executes(lab: Lab, page: Any) -> None:
    payload = " ".join(XSS)
    code = (f"LOOKUP_RESULT = {payload!r}\n"
            f"show({('# Answer ' + payload)!r}, thinking={payload!r}, narration={payload!r}, "
            f"args={json.dumps({'code': payload})!r}, delay=0)")
    _notebook(lab, "xss.ipynb", [SETUP, code])
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_notebook(page, lab, "xss.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(widget).to_be_visible()  # the model's <style> did not hide it
    widget.locator(".agentcell-thinking summary").click()
    # Interact the way a reader would: hover and click every link and element in the answer.
    for link in widget.locator("a").all():
        link.click(modifiers=["Control"]) if link.get_attribute("href") else link.hover()
    for el in widget.locator(".agentcell-markdown *").all()[:40]:
        if el.is_visible():
            el.hover(timeout=2_000)
    settled(page)  # what a hover or click could fetch or schedule for its next frame has happened
    assert page.evaluate("() => window.__pwned") is None
    assert dialogs == []
    found = page.evaluate(
        """(root) => {
            const bad = [];
            for (const el of root.querySelectorAll('*')) {
                if (['SCRIPT', 'IFRAME', 'STYLE', 'FORM', 'svg', 'math'].includes(el.tagName)) bad.push(el.tagName);
                for (const a of el.attributes) {
                    if (/^on/i.test(a.name) || /javascript:/i.test(a.value)) bad.push(el.tagName + ' ' + a.name);
                }
            }
            return bad;
        }""", widget.element_handle())
    assert found == []
    # The payloads are still readable as text (in tool args / results / thinking).
    expect(widget.locator(".agentcell-tool-result")).to_contain_text("<script>window.__pwned='script'</script>")
    assert page.js_errors == []


def test_approve_and_deny_clicks_reach_the_kernel(lab: Lab, page: Any) -> None:
    tool_cell = ('notes = []\n@agentcell.tool\ndef write_note(text: str) -> str:\n'
                 '    """Write a note about a course."""\n    notes.append(text)\n    return f"note saved: {text}"')
    _notebook(lab, "approve.ipynb", [
        "import agentcell\n%load_ext agentcell", tool_cell,
        "%%agent -o a1 --approve writes --tools write_note\nPlease write_note about PSYC605 [[answer|use_tools=true]]",
        "%%agent -o a2 --approve writes --tools write_note\nPlease write_note about PSYC606 [[answer|use_tools=true]]",
        "print(notes, '|', a1.status, '|', a2.status, '|', a2.answer)",
    ])
    open_notebook(page, lab, "approve.ipynb")
    for i in (0, 1):
        run_cell(page, i)
        wait_cell_done(page, i)
    run_cell(page, 2)
    first = cell(page, 2).locator(".agentcell")
    prompt = first.locator('.agentcell-approval[data-approval="pending"]')
    # The first %%agent cell of a fresh kernel imports pydantic-ai: on a loaded machine that takes a while.
    expect(prompt).to_contain_text("write_note", timeout=30_000)
    prompt.locator(".agentcell-approve").click()
    expect(first.locator('.agentcell-approval[data-approval="approved"]')).to_have_count(1)
    expect(first).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(first.locator('.agentcell-tool[data-tool="write_note"]')).to_contain_text("note saved: PSYC605")

    run_cell(page, 3)
    second = cell(page, 3).locator(".agentcell")
    prompt = second.locator('.agentcell-approval[data-approval="pending"]')
    expect(prompt).to_be_visible(timeout=30_000)
    prompt.locator(".agentcell-reason").fill("not today")
    prompt.locator(".agentcell-deny").click()
    expect(second.locator('.agentcell-approval[data-approval="denied"]')).to_contain_text("not today")
    expect(second).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(second.locator('.agentcell-tool[data-tool="write_note"]')).to_have_count(0)

    run_cell(page, 4)
    wait_cell_done(page, 4)
    out = cell(page, 4).locator(".jp-OutputArea-output").inner_text()
    notes, s1, s2, answer = (part.strip() for part in out.split("|", 3))
    assert notes == "['PSYC605']"  # approved ran, denied did not
    assert (s1, s2) == ("completed", "completed")
    assert "not today" in answer  # the denial reason reached the model
    assert page.js_errors == []


PACED = r'''
import asyncio
from pydantic_ai.models.function import FunctionModel

release = asyncio.Event()

async def paced(messages, info):
    """A word every 0.2 s until the test lets it end: the run is still going whenever the page comes back."""
    i = 0
    while not release.is_set():
        yield f"word{i} "
        i += 1
        await asyncio.sleep(0.2)
    yield "Switch with the end."

paced_model = FunctionModel(stream_function=paced, model_name="paced")
'''


def test_reload_mid_run_shows_the_run_so_far_and_keeps_streaming(lab: Lab, page: Any) -> None:
    _notebook(lab, "reload.ipynb", [
        "%load_ext agentcell",
        PACED,
        "%%agent --model paced_model\nExplain, in several sentences, how a tool-calling loop works.\n[[answer]]",
        "release.set()",
    ])
    open_notebook(page, lab, "reload.ipynb")
    for i in (0, 1):
        run_cell(page, i)
        wait_cell_done(page, i)
    run_cell(page, 2)
    answer = cell(page, 2).locator('.agentcell .agentcell-answer[data-slot="answer"]')
    wait_for_words(answer, 8)
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    before = _seconds(cell(page, 2).locator(".agentcell-elapsed"))
    page.reload()
    page.wait_for_function(
        "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
        " return k && k.connectionStatus === 'connected'; }", timeout=60_000)
    widget = cell(page, 2).locator(".agentcell")
    expect(widget).to_have_attribute("data-status", "running", timeout=30_000)
    answer = widget.locator('.agentcell-answer[data-slot="answer"]')
    wait_for_words(answer, 8, timeout=10)
    seen = _words(answer)
    # Elapsed comes from the kernel's clock: the view opened now, yet it goes on from where the old
    # view was (a clock of its own would start again near 0), and it still moves.
    after = _seconds(widget.locator(".agentcell-elapsed"))
    assert after >= before
    expect(widget.locator(".agentcell-elapsed")).not_to_have_text(f"{after:.1f} s", timeout=30_000)
    wait_for_words(answer, seen + 1, timeout=10)
    run_cell(page, 3)  # let the model finish
    expect(widget).to_have_attribute("data-status", "completed", timeout=30_000)
    assert "Switch with" in (answer.text_content() or "")  # the end of the answer arrived
    screenshot(page, "widget-after-reload.png")
    assert page.js_errors == []


def test_saved_notebook_shows_the_run_without_a_kernel(lab: Lab, page: Any, tmp_path: Path) -> None:
    _notebook(lab, "saved.ipynb", [SETUP, f"LOOKUP_RESULT = {XSS[1]!r} + ' led by Dr Ada'\nshow({ANSWER!r})"])
    open_notebook(page, lab, "saved.ipynb")
    for i in (0, 1):
        run_cell(page, i)
    expect(cell(page, 1).locator(".agentcell")).to_have_attribute("data-status", "completed", timeout=30_000)
    # The static twin was updated in place with the transcript: wait for it, then save.
    expect(cell(page, 1).locator(".agentcell-static")).to_have_attribute("data-status", "completed")
    page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    lab.delete_sessions()  # no kernel any more

    saved = nbformat.read(lab.root / "saved.ipynb", as_version=4)
    view, out = saved.cells[1].outputs
    assert view.output_type == out.output_type == "display_data"
    assert set(view.data) == {"application/vnd.jupyter.widget-view+json", "text/plain"}
    assert set(out.data) == {"text/html", "text/plain"}
    assert "Dr Ada Lovelace" in out.data["text/plain"]
    facts = out.metadata["agentcell"]
    assert facts["model"] == "function::fn" and facts["status"] == "completed"
    assert facts["usage"]["tool_calls"] == 1 and facts["limits"]["requests"] == 20
    assert facts["agentcell_version"]
    assert "widgets" in saved.metadata  # JupyterLab saved the widget state (saveState on)

    # (a) Reopened in JupyterLab with no kernel (trusted, widget state saved): JupyterLab cannot
    # render the widget without a kernel, so the static twin shows and hides "Loading widget...".
    nokernel = copy.deepcopy(saved)
    for key in ("kernelspec", "language_info"):  # either would make JupyterLab start a kernel
        nokernel.metadata.pop(key, None)
    _sign_and_write(nokernel, lab.root / "nokernel.ipynb")
    page.goto(lab.url("lab/tree/nokernel.ipynb"))
    dismiss_kernel_dialog(page)
    static = cell(page, 1).locator(".agentcell-static")
    expect(static).to_be_visible()
    expect(static).to_contain_text("Dr Ada Lovelace")
    # The saved answer reads like the live one: Markdown rendered, not raw.
    expect(static.locator(".ac-answer h2")).to_have_text("Who leads PSYC605")
    expect(static.locator(".ac-answer pre")).to_contain_text("enrol PSYC605")
    expect(static.locator(".ac-answer li")).to_have_count(2)
    expect(static.locator("strong > code", has_text="lookup")).to_be_visible()  # the tool card (the teaching view names it too)
    expect(static).to_contain_text("led by Dr Ada")
    expect(cell(page, 1).get_by_text("Loading widget")).to_be_hidden()
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel ?? null") is None
    assert lab.api("GET", "/api/kernels") == []
    static.scroll_into_view_if_needed()
    static.screenshot(path=str(ARTIFACTS / "saved-no-kernel.png"))

    # (b) No widget state and untrusted (as from nbclient without state, GitHub, a download): the
    # static HTML fallback is what JupyterLab shows.
    bare = copy.deepcopy(nokernel)
    bare.metadata.pop("widgets", None)
    nbformat.write(bare, lab.root / "bare.ipynb")
    page.goto(lab.url("lab/tree/bare.ipynb"))
    dismiss_kernel_dialog(page)
    static = cell(page, 1).locator(".agentcell-static")
    expect(static).to_contain_text("Dr Ada Lovelace")
    expect(static).to_contain_text("lookup")
    expect(static).to_contain_text("led by Dr Ada")
    static.scroll_into_view_if_needed()
    static.screenshot(path=str(ARTIFACTS / "saved-untrusted-static.png"))

    # (c) nbconvert --to html: the static rendering is in the page, and nothing hostile runs.
    html_path = tmp_path / "bare.html"
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", str(lab.root / "bare.ipynb"),
                    "--output", str(html_path)], check=True, capture_output=True, timeout=120)
    page.route("http*://**", lambda route: route.abort())  # readers without the CDNs
    page.goto(html_path.as_uri())
    expect(page.locator(".agentcell-static")).to_contain_text("Dr Ada Lovelace")
    expect(page.locator(".agentcell-static")).to_contain_text("<img src=x onerror=")
    assert page.evaluate("() => window.__pwned") is None


def _sign_and_write(nb: Any, path: Path) -> None:
    from nbformat.sign import NotebookNotary

    NotebookNotary().sign(nb)
    nbformat.write(nb, path)
