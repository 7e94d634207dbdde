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

from tests.browser.lab import ARTIFACTS, Lab, cell, open_notebook, run_cell, sync_api, wait_cell_done, wait_for_words

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
  const measure = (el, text, out) => {
    const cs = getComputedStyle(el);
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
    time.sleep(0.4)


def _contrast(page: Any) -> list[dict[str, Any]]:
    roots = page.locator(".agentcell")
    return page.evaluate(PROBE, [roots.nth(i).element_handle() for i in range(roots.count())])


def _active(page: Any) -> dict[str, Any]:
    return page.evaluate(ACTIVE)


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
        widgets[1].scroll_into_view_if_needed()
        widgets[1].screenshot(path=str(ARTIFACTS / f"a11y-{theme.split()[-1].lower()}-{theme.count(' ')}.png"))
    _record("contrast", report)
    _record("contrast_failures", failures)
    print(json.dumps({t: (r["min_contrast"], r["min_font_px"], r["text_nodes"]) for t, r in report.items()}))
    assert failures == []
    assert page.js_errors == []
