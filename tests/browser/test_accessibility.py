"""Accessibility of the live widget in JupyterLab + Chromium (issue 22).

Contrast is computed here from computed colours, for every visible text node of every widget on the page,
in JupyterLab's light, dark and dark high-contrast themes (axe's own contrast rule does not apply inside
JupyterLab). Focus after Stop / Approve / Deny, the status during a pending approval, reduced motion, and
axe-core (scoped to the widget) in four states are checked too; screenshots at presentation size are kept in
`test-artifacts/`, with the measured numbers in `test-artifacts/accessibility.json`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import (
    ARTIFACTS,
    KernelFrames,
    Lab,
    cell,
    open_notebook,
    painted,
    run_cell,
    sync_api,
    wait_cell_done,
    wait_for_words,
)

pytestmark = pytest.mark.browser
expect = sync_api.expect

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
THEMES = ("JupyterLab Light", "JupyterLab Dark", "JupyterLab Dark High Contrast")
MIN_CONTRAST = 4.5
MIN_FONT_PX = 13

# A scripted model: round 1 thinks, narrates and calls `tool`; round 2 streams a Markdown answer word by
# word. `lookup` is readonly; `send_note` writes, so with approve_writes it waits for Approve / Deny.
SETUP = r'''
import asyncio, agentcell
from pydantic_ai.models.function import FunctionModel, DeltaThinkingPart, DeltaToolCall
from agentcell import readonly

@readonly
def lookup(code: str) -> str:
    """Look up who leads a course."""
    return "PSYC605: Research Methods, led by Dr Ada Lovelace."

@agentcell.tool
def send_note(text: str) -> str:
    """Send a note to the course lead."""
    return f"note sent: {text}"

ANSWER = ("## Who leads PSYC605\n\n**Dr Ada Lovelace** leads *Research Methods* (`PSYC605`).\n\n"
          "- taught in autumn\n- 20 credits\n\n> Rooms change in week 3.\n\nSee [the handbook](https://example.org/psyc605).")
LONG = " ".join(f"Word{i} of a long answer that keeps streaming." for i in range(120))

def scripted(tool, answer, delay):
    args = '{"code": "PSYC605"}' if tool == "lookup" else '{"text": "PSYC605 moves to room 2"}'
    async def fn(messages, info):
        if len(messages) == 1:
            yield {99: DeltaThinkingPart(content="I should look the course up.")}
            yield "Let me check the records. "
            yield {0: DeltaToolCall(name=tool, json_args=args, tool_call_id="c1")}
            return
        for word in answer.split(" "):
            await asyncio.sleep(delay)
            yield word + " "
    return FunctionModel(stream_function=fn)

def run(tool="lookup", answer=ANSWER, delay=0.01):
    return agentcell.show("Who leads PSYC605? [[answer|use_tools=true]]", model=scripted(tool, answer, delay),
                          tools=[lookup, send_note], approve_writes=True)
'''

# Every visible text node under each root: its contrast against the composited background behind it (own
# and ancestors' background colours, opacity folded in), and its font size. Colours are read through a
# canvas, so any CSS colour syntax (rgb(), color(srgb …) from color-mix) is understood.
PROBE = r"""
(roots) => {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const g = canvas.getContext("2d", { willReadFrequently: true });
  const rgba = (c) => {
    g.clearRect(0, 0, 1, 1);
    g.fillStyle = "rgba(0, 0, 0, 0)";
    g.fillStyle = c;
    g.fillRect(0, 0, 1, 1);
    const d = g.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => {
    const a = top[3] + under[3] * (1 - top[3]);
    if (!a) return [0, 0, 0, 0];
    return [0, 1, 2].map((i) => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a).concat(a);
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    return layers.reverse().reduce((under, c) => over(c, under), [255, 255, 255, 1]);
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity);
    return o;
  };
  const lum = (c) => {
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const measure = (el, text, out, pseudo) => {
    const cs = getComputedStyle(el, pseudo);
    if (cs.visibility !== "visible") return;
    const bg = background(el);
    const fg = rgba(cs.color);
    fg[3] *= opacity(el);
    const where = el.closest("[class*=agentcell-]")?.className ?? el.tagName;
    out.push({ text: text.slice(0, 48), where, ratio: Math.round(ratio(over(fg, bg), bg) * 100) / 100,
               px: parseFloat(cs.fontSize), color: cs.color });
  };
  const out = [];
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n; (n = walker.nextNode()); ) {
      const text = n.textContent.trim();
      const el = n.parentElement;
      if (!text || el.closest("option, select")) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const r = range.getBoundingClientRect();
      if (r.width && r.height) measure(el, text, out);
    }
    for (const sel of root.querySelectorAll("select")) {
      if (sel.getBoundingClientRect().width) measure(sel, sel.selectedOptions[0]?.text ?? "", out);
    }
    for (const input of root.querySelectorAll("input")) {
      if (!input.getBoundingClientRect().width) continue;
      measure(input, input.value || "(value)", out);
      if (input.placeholder) measure(input, input.placeholder, out, "::placeholder");
    }
  }
  return out;
}
"""

RUNNING_ANIMATIONS = """(root) => root.getAnimations({ subtree: true }).filter((a) => a.playState === "running")
    .map((a) => `${a.animationName ?? a.constructor.name} on ${a.effect?.target?.className}${a.effect?.pseudoElement ?? ""}`)"""

ACTIVE = """() => { const a = document.activeElement; return a ? {
    tag: a.tagName, cls: a.className, text: (a.textContent || "").trim(), label: a.getAttribute("aria-label"),
    inWidget: !!a.closest(".agentcell"), callId: a.closest("[data-call-id]")?.dataset.callId ?? null } : null; }"""


def _theme(page: Any, name: str) -> None:
    page.evaluate("(t) => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme: t}); }", name)
    page.wait_for_function("(t) => document.body.dataset.jpThemeName === t", arg=name)
    painted(page)  # the theme's stylesheet is in (JupyterLab sets the name once it loaded); now it is applied


def _contrast(page: Any) -> list[dict[str, Any]]:
    roots = page.locator(".agentcell")
    return page.evaluate(PROBE, [roots.nth(i).element_handle() for i in range(roots.count())])


def _active(page: Any) -> dict[str, Any]:
    return page.evaluate(ACTIVE)


def _active_when(page: Any, ok: Any, *, timeout: float = 5.0) -> dict[str, Any]:
    """The focused element once `ok(it)` holds (or the last one seen): the widget moves the focus in
    its next render, a frame after the key press returned."""
    deadline = time.monotonic() + timeout
    while True:
        active = _active(page)
        if ok(active) or time.monotonic() > deadline:
            return active
        time.sleep(0.05)


def _axe(page: Any, widget: Any) -> list[dict[str, Any]]:
    assert AXE.exists(), f"{AXE} is missing: run `npm ci`"
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("(el) => axe.run(el, { resultTypes: ['violations'] })", widget.element_handle())
    return [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]]}
            for v in result["violations"]]


def _open_all_details(widget: Any) -> None:
    widget.evaluate("(root) => root.querySelectorAll('details').forEach((d) => { d.open = true; })")


def _record(name: str, value: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "accessibility.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = value
    path.write_text(json.dumps(data, indent=2))


def _start(lab: Lab, page: Any, name: str, cells: list[str]) -> None:
    lab.write_notebook(name, [SETUP, *cells])
    open_notebook(page, lab, name)
    run_cell(page, 0)
    wait_cell_done(page, 0)


def test_every_text_node_meets_4_5_to_1_in_light_dark_and_high_contrast(lab: Lab, page: Any) -> None:
    _start(lab, page, "contrast.ipynb", [
        "run()",  # 1: a tool run, done (shown with the teaching view on)
        "run('send_note')",  # 2: an approval pending
        "run('send_note')",  # 3: denied with a reason
        "run(answer=LONG, delay=0.05)",  # 4: stopped mid-answer
        "%load_ext agentcell",
        "%%agent\nSay hello. [[answer]]",  # 6: the offline default model (its badge)
    ])
    for i in range(1, 7):
        run_cell(page, i)
    widgets = [cell(page, i).locator(".agentcell") for i in range(7)]
    expect(widgets[1]).to_have_attribute("data-status", "completed", timeout=30_000)
    widgets[1].locator(".agentcell-teach").click()
    denied = widgets[3].locator('.agentcell-approval[data-approval="pending"]')
    denied.locator(".agentcell-reason").fill("not this term")
    denied.locator(".agentcell-deny").click()
    wait_for_words(widgets[4].locator(".agentcell-answer"), 6)
    widgets[4].locator(".agentcell-stop").click()
    expect(widgets[2].locator('.agentcell-approval[data-approval="pending"]')).to_be_visible()
    for i in (3, 4, 6):
        expect(widgets[i]).not_to_have_attribute("data-status", "running", timeout=30_000)
    for i in (1, 2, 3, 4, 6):
        _open_all_details(widgets[i])
    report: dict[str, Any] = {}
    failures: list[str] = []
    for theme in THEMES:
        _theme(page, theme)
        texts = _contrast(page)
        assert len(texts) > 80, texts
        worst = min(texts, key=lambda t: t["ratio"])
        smallest = min(texts, key=lambda t: t["px"])
        report[theme] = {"text_nodes": len(texts), "min_contrast": worst["ratio"], "worst": worst,
                         "min_font_px": smallest["px"], "smallest": smallest}
        failures += [f"{theme}: {t['ratio']}:1 {t['px']}px {t['where']!r} {t['text']!r} ({t['color']})"
                     for t in texts if t["ratio"] < MIN_CONTRAST or t["px"] < MIN_FONT_PX]
    _record("contrast", report)
    _record("contrast_failures", failures)
    _record("contrast_elements", sorted({t["where"] for t in texts}))
    print(json.dumps({t: (r["min_contrast"], r["min_font_px"], r["text_nodes"]) for t, r in report.items()}))
    assert failures == []
    assert page.js_errors == []


def test_stop_keeps_the_focus_and_the_stop_is_announced_once(lab: Lab, page: Any) -> None:
    frames = KernelFrames(page)  # before the notebook opens its kernel's websocket
    _start(lab, page, "stop-focus.ipynb", ["run(answer=LONG, delay=0.05)"])
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    wait_for_words(widget.locator(".agentcell-answer"), 6)
    stop = widget.locator(".agentcell-stop")
    stop.focus()
    page.keyboard.press("Enter")  # the keyboard way
    expect(widget).to_have_attribute("data-status", "stopped", timeout=10_000)
    expect(widget.locator(".agentcell-status")).to_have_text("stopped")
    frames.wait_for('"update"', '"final"')  # the final trait arrives after the status: it must not move the focus
    painted(page)
    focused = _active(page)
    assert focused is not None and focused["inWidget"], focused
    assert (focused["tag"], focused["label"]) == ("BUTTON", "Stop the run"), focused
    expect(stop).to_have_attribute("aria-disabled", "true")
    expect(stop).to_be_disabled()  # Playwright reads aria-disabled too
    # One announcement: the status (a polite live region); nothing else live has text.
    live = widget.evaluate("""(root) => [...root.querySelectorAll('[role=alert], [role=status], [aria-live]')]
        .filter((e) => !e.closest('[hidden]') && e.textContent.trim()).map((e) => e.className)""")
    assert live == ["agentcell-status"]
    page.keyboard.press("Tab")  # the focus moves on; Stop becomes plainly disabled
    expect(stop).to_have_attribute("disabled", "")
    _record("focus_after_stop", focused)
    assert page.js_errors == []


# The second run starts once the test has put the reader in another cell (it creates the file).
SECOND_WHEN_TOLD = """import pathlib
while not pathlib.Path("go-second").exists():
    await asyncio.sleep(0.05)
run('send_note')"""


def test_pending_approval_is_announced_and_the_focus_follows_approve_and_deny(lab: Lab, page: Any) -> None:
    _start(lab, page, "approve-focus.ipynb", ["run('send_note')", SECOND_WHEN_TOLD])
    run_cell(page, 1)
    first = cell(page, 1).locator(".agentcell")
    card = first.locator('.agentcell-approval[data-approval="pending"]')
    expect(card).to_be_visible(timeout=30_000)
    expect(first.locator(".agentcell-status")).to_have_text("waiting for your approval: send_note")
    expect(first).to_have_attribute("data-status", "running")
    expect(first.locator(".agentcell-goto-approval")).to_be_visible()
    # No caret while the run waits for the reader.
    assert first.locator(".agentcell-answer").evaluate("(el) => getComputedStyle(el, '::before').content") in ("none", "normal")
    # The run was started from this cell (command mode focuses the cell): the card takes the focus.
    focused = _active(page)
    assert focused["inWidget"] and focused["label"] == "Approval for send_note", focused
    page.keyboard.press("Tab")
    assert _active(page)["label"] == "Approve send_note"
    page.keyboard.press("Enter")
    after_approve = _active_when(page, lambda a: a["cls"] == "agentcell-approval-outcome")
    assert after_approve["cls"] == "agentcell-approval-outcome" and after_approve["inWidget"], after_approve
    expect(first).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(first.locator(".agentcell-approval-outcome")).to_have_text("approved")
    resolved = _active(page)
    assert (resolved["cls"], resolved["text"]) == ("agentcell-approval-outcome", "approved"), resolved

    # The second run starts while the reader types in another cell: its card leaves that focus alone,
    # and the skip link next to its status leads to it.
    run_cell(page, 2)
    cell(page, 0).locator(".jp-InputArea-editor").click()
    editor = _active(page)
    assert "cm-content" in editor["cls"], editor
    (lab.root / "go-second").touch()  # the reader is typing elsewhere: now the second run may start
    second = cell(page, 2).locator(".agentcell")
    expect(second.locator('.agentcell-approval[data-approval="pending"]')).to_be_visible(timeout=30_000)
    expect(second.locator(".agentcell-status")).to_have_text("waiting for your approval: send_note")
    painted(page)  # the card has rendered (its status said so) and a frame more: the focus it would take is taken
    assert _active(page) == editor
    second.locator(".agentcell-goto-approval").focus()
    page.keyboard.press("Enter")
    assert _active_when(page, lambda a: a["label"] == "Approval for send_note")["label"] == "Approval for send_note"
    page.keyboard.press("Tab")  # Approve
    page.keyboard.press("Tab")  # the reason: before Deny
    assert _active(page)["cls"] == "agentcell-reason"
    page.keyboard.type("not this term")
    page.keyboard.press("Tab")
    assert _active(page)["label"] == "Deny send_note"
    page.keyboard.press("Enter")
    expect(second).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(second.locator(".agentcell-approval-outcome")).to_have_text("denied: not this term")
    after_deny = _active(page)
    assert (after_deny["cls"], after_deny["text"], after_deny["inWidget"]) == (
        "agentcell-approval-outcome", "denied: not this term", True), after_deny
    _record("focus_after_approve_deny", {"approve": resolved, "deny": after_deny})
    assert page.js_errors == []


def test_reduced_motion_leaves_no_running_animation(lab: Lab, page: Any) -> None:
    _start(lab, page, "motion.ipynb", ["run(answer=LONG, delay=0.05)"])
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    answer = widget.locator(".agentcell-answer")
    words = wait_for_words(answer, 4)
    moving = page.evaluate(RUNNING_ANIMATIONS, widget.element_handle())
    assert moving, "the probe sees no animation even without the preference"
    page.emulate_media(reduced_motion="reduce")
    for more in range(1, 6):  # sampled as the stream renders five more words
        wait_for_words(answer, words + more)
        assert page.evaluate(RUNNING_ANIMATIONS, widget.element_handle()) == []
    assert widget.get_attribute("data-status") == "running"
    assert page.evaluate(RUNNING_ANIMATIONS, widget.element_handle()) == []
    _record("animations_without_reduced_motion", moving)
    widget.locator(".agentcell-stop").click()
    expect(widget).to_have_attribute("data-status", "stopped", timeout=10_000)


def test_axe_finds_no_violations_in_four_states(lab: Lab, page: Any) -> None:
    _start(lab, page, "axe.ipynb", ["run()", "run(answer=LONG, delay=0.05)", "run('send_note')"])
    run_cell(page, 1)
    done = cell(page, 1).locator(".agentcell")
    expect(done).to_have_attribute("data-status", "completed", timeout=30_000)
    found = {"tool run done": _axe(page, done)}
    done.locator(".agentcell-teach").click()
    expect(done).to_have_attribute("data-teaching", "true")
    _open_all_details(done)
    found["teaching view"] = _axe(page, done)
    run_cell(page, 2)
    streaming = cell(page, 2).locator(".agentcell")
    wait_for_words(streaming.locator(".agentcell-answer"), 4)
    found["streaming"] = _axe(page, streaming)
    assert streaming.get_attribute("data-status") == "running"
    streaming.locator(".agentcell-stop").click()
    run_cell(page, 3)
    pending = cell(page, 3).locator(".agentcell")
    expect(pending.locator('.agentcell-approval[data-approval="pending"]')).to_be_visible(timeout=30_000)
    found["approval pending"] = _axe(page, pending)
    _record("axe_violations", found)
    assert found == {"tool run done": [], "teaching view": [], "streaming": [], "approval pending": []}
    assert page.js_errors == []


def test_presentation_size_light_and_dark_screenshots(lab: Lab, page: Any) -> None:
    _start(lab, page, "presentation.ipynb", [
        "w = run()\nw.presentation = True\nw",
        "p = run('send_note')\np.presentation = True\np",
        "run()",  # normal size: JupyterLab's Presentation Mode makes it large too
    ])
    for i in (1, 2, 3):
        run_cell(page, i)
    done, pending, plain = (cell(page, i).locator(".agentcell") for i in (1, 2, 3))
    expect(done).to_have_attribute("data-status", "completed", timeout=30_000)
    expect(done).to_have_attribute("data-size", "presentation")
    expect(pending.locator('.agentcell-approval[data-approval="pending"]')).to_be_visible(timeout=30_000)
    expect(plain).to_have_attribute("data-status", "completed", timeout=30_000)
    sizes = {}
    for name, widget in (("done", done), ("pending", pending), ("plain", plain)):
        texts = page.evaluate(PROBE, [widget.element_handle()])
        sizes[name] = min(t["px"] for t in texts)
    assert sizes["done"] >= 18 and sizes["pending"] >= 18 and sizes["plain"] == MIN_FONT_PX, sizes
    page.evaluate("() => { void window.jupyterapp.commands.execute('application:toggle-presentation-mode'); }")
    page.wait_for_selector(".jp-mod-presentationMode")
    sizes["plain, JupyterLab presentation mode"] = min(t["px"] for t in page.evaluate(PROBE, [plain.element_handle()]))
    assert sizes["plain, JupyterLab presentation mode"] >= 18, sizes
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _theme(page, theme)
        tag = theme.split()[-1].lower()
        for name, widget in (("done", done), ("pending", pending)):
            widget.scroll_into_view_if_needed()
            widget.screenshot(path=str(ARTIFACTS / f"presentation-{name}-{tag}.png"))
    _record("presentation_min_font_px", sizes)
    assert page.js_errors == []
