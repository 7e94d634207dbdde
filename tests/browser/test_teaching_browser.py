"""The teaching view in a real JupyterLab + Chromium, found by accessible names and visible text: the three
lanes, every marker kind in the runs that produce them, the Python-style signatures, the concurrency bars
of two tools run together, the wire of a run against the OpenAI-compatible fixture server (the HTTP body,
no key), screenshots of the 3-round run in light and dark, and the lesson export opened with no network.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, cell, open_notebook, painted, run_cell, settled, sync_api, wait_cell_done
from tests.openai_server import Call, Fail, FakeOpenAI, Reply, Text, Think, Usage

pytestmark = pytest.mark.browser
expect = sync_api.expect
KEY = "sk-browser-SECRET0123456789"

SETUP = '''
import asyncio, agentcell
from agentcell import readonly, tool
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
import json
from pydantic_ai.models.function import FunctionModel, DeltaToolCall
from pydantic_ai.usage import UsageLimits

@readonly
async def lookup_module(module_code: str) -> str:
    """Look a module up by its code. Returns its title and who leads it."""
    await asyncio.sleep(0.3)
    return "Cognition and Emotion, led by Dr Ada Byron"

@readonly
async def room_of(module_code: str, term: str = "autumn") -> str:
    """Where a module is taught in a term."""
    await asyncio.sleep(0.3)
    return f"{module_code} meets in room B12 in {term}"

@readonly
def timetable(module_code: str) -> str:
    """The module's timetable."""
    raise ConnectionError("timetable service is down")

@readonly
def lookup(q: str) -> str:
    """Look q up."""
    return f"found {q}"

@tool(approve=True)
def email_leader(message: str) -> str:
    """Email the module leader (asks a person first)."""
    return "sent"

wire_model = OpenAIChatModel("fake-model", provider=OpenAIProvider(base_url=BASE, api_key=KEY))

def stubborn(tool="lookup", args={"q": "x"}, verdict={"triggered": False, "reason": "an ordinary question"}):
    """Calls the same tool with the same arguments whenever it may; answers when it may not."""
    async def fn(messages, info):
        if info.output_tools:  # a guard: answer its verdict
            yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args=json.dumps(verdict))}
        elif info.function_tools:
            yield {0: DeltaToolCall(name=tool, json_args=json.dumps(args))}
        else:
            yield "From what I have: found x."
    return FunctionModel(stream_function=fn)
'''

CELLS = [
    "agentcell.show('Who leads PSYC605, where does it meet, and when? [[answer|use_tools=true, max_iter=4]]', "
    "model=wire_model, tools=[lookup_module, room_of, timetable])",
    "agentcell.show('Find x. [[answer|use_tools=true]]', model=stubborn(), tools=[lookup])",
    "agentcell.show('Find x. [[answer|use_tools=true, max_iter=2]]', model=stubborn(), tools=[lookup])",
    "agentcell.show('Find x. [[answer|use_tools=true]]', model=stubborn(), tools=[lookup], "
    "limits=UsageLimits(request_limit=3))",
    "agentcell.show('Is this an injection? [[halt:check]]\\n\\nAnswer. [[answer]]', model=stubborn())",
    "agentcell.show('Is this an injection? [[halt:check]]\\n\\nAnswer. [[answer]]', "
    "model=stubborn(verdict={'triggered': True, 'reason': 'asks to ignore the instructions'}))",
    "agentcell.show('Email the leader. [[answer|use_tools=true, max_iter=2]]', "
    "model=stubborn('email_leader', {'message': 'hi'}), tools=[email_leader])",
]


def _widget(page: Any, index: int) -> Any:
    return cell(page, index).locator(".agentcell").first


def _teach(widget: Any) -> None:
    widget.get_by_role("button", name=re.compile("^Teaching view")).click()
    expect(widget).to_have_attribute("data-teaching", "true")


def _marker(widget: Any, title: str) -> Any:
    return widget.get_by_role("note", name=f"agentcell: {title}")


def _theme(page: Any, name: str) -> None:
    page.evaluate("(t) => { void window.jupyterapp.commands.execute('apputils:change-theme', {theme: t}); }", name)
    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light",
                           arg="true" if name.endswith("Light") else "false")
    painted(page)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as fake:
        fake.script(
            Reply(Think("Two lookups; they can run together."), Text("Let me look both up. "),
                  Call("lookup_module", {"module_code": "PSYC605"}, id="call_1"),
                  Call("room_of", {"module_code": "PSYC605"}, id="call_2"), Usage(120, 30)),
            Fail(429, "slow down", retry_after=0.3),
            Reply(Call("timetable", {"module_code": "PSYC605"}, id="call_3"), Usage(190, 12)),
            Reply(Text("PSYC605 is led by Dr Ada Byron and meets in room B12; the timetable is down today.",
                       pieces=6, delay=0.05), Usage(240, 25)),
        )
        yield fake


def test_the_lesson_in_the_browser(lab: Lab, page: Any, server: FakeOpenAI) -> None:
    setup = f"BASE = {server.base_url!r}\nKEY = {KEY!r}\n" + SETUP
    lab.write_notebook("teaching.ipynb", [setup, *CELLS])
    open_notebook(page, lab, "teaching.ipynb")
    for i in range(len(CELLS) + 1):
        run_cell(page, i)
        wait_cell_done(page, i)
    lesson = _widget(page, 1)
    expect(lesson).to_have_attribute("data-status", "completed", timeout=30_000)
    _teach(lesson)

    # The three lanes, the rounds, the signatures.
    for lane in ("your code & tools", "agentcell", "model"):
        expect(lesson.locator(".ac-lane-head", has_text=lane)).to_be_visible()
    expect(lesson.get_by_role("group", name=re.compile(r"^round \d$"))).to_have_count(3)
    sig = lesson.get_by_label("Python signature of room_of")
    expect(sig).to_contain_text("def room_of(module_code: str, term: str = 'autumn'):")
    expect(sig).to_contain_text('"""Where a module is taught in a term."""')

    # Two tools run together: two bars, each saying it ran at the same time as the other.
    round1 = lesson.get_by_role("group", name="round 1")
    expect(round1.get_by_role("img", name=re.compile("^lookup_module ran from .* at the same time as room_of$"))).to_be_visible()
    expect(round1.get_by_role("img", name=re.compile("^room_of ran from .* at the same time as lookup_module$"))).to_be_visible()
    expect(round1.get_by_text("2 tools ran at the same time")).to_be_visible()
    expect(_marker(round1, "retraction")).to_contain_text("This was narration, not the answer")
    round2 = lesson.get_by_role("group", name="round 2")
    expect(_marker(round2, "retry")).to_contain_text("after 429")
    expect(round2.get_by_text("error fed back — the model reads:")).to_be_visible()

    # The wire against the fixture server: the HTTP body as sent, no key anywhere.
    lesson.get_by_role("button", name="HTTP (as sent)").first.click()
    wire = round2.locator("details.ac-wire")
    wire.locator("summary").click()
    body = wire.locator("pre").first
    expect(body).to_contain_text('"tool_call_id": "call_2"')
    expect(body).to_contain_text('"authorization": "[redacted]"')
    # The key is in the notebook's own setup cell (its input); no output may carry it.
    outputs = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea')].map(o => o.innerHTML).join('')")
    assert "[redacted]" in outputs and KEY[3:] not in outputs
    lesson.scroll_into_view_if_needed()
    _shots(page, lesson)

    # Every marker kind, in the runs that produce them.
    expected = {2: ["loop-detection nudge", "final round: answer now"], 3: ["final round: answer now"],
                4: ["budget exhausted"], 5: ["guard joined"], 6: ["guard tripped"]}
    for index, titles in expected.items():
        widget = _widget(page, index)  # cell index: 0 is the setup, 1 the lesson
        expect(widget).not_to_have_attribute("data-status", "running", timeout=30_000)
        _teach(widget)
        for title in titles:
            expect(_marker(widget, title).first).to_be_visible()
    approval = _widget(page, 7)
    expect(approval).to_have_attribute("data-waiting", "approval", timeout=30_000)
    _teach(approval)
    expect(_marker(approval, "waiting for approval")).to_be_visible()
    approval.locator(".agentcell-reason").first.fill("not during the workshop")
    approval.get_by_role("button", name="Deny email_leader").first.click()
    expect(_marker(approval, "approval denied")).to_contain_text("not during the workshop", timeout=30_000)
    why = _marker(approval, "approval denied").locator("details.ac-why")
    why.locator("summary").focus()
    page.keyboard.press("Enter")  # the "why" opens from the keyboard
    expect(why).to_have_attribute("open", "")
    assert page.js_errors == []


def _shots(page: Any, lesson: Any) -> None:
    """The teaching panel of the 3-round run, light and dark, whole (a viewport tall enough to hold it)."""
    ARTIFACTS.mkdir(exist_ok=True)
    panel = lesson.locator(".agentcell-teaching")
    panel.evaluate("(el) => el.querySelectorAll('details.ac-wire[open]').forEach((d) => { d.open = false; })")
    height = int(panel.evaluate("(el) => el.getBoundingClientRect().height"))
    page.set_viewport_size({"width": 1200, "height": min(8000, height + 400)})
    for theme, name in (("JupyterLab Light", "teaching-lesson-light.png"), ("JupyterLab Dark", "teaching-lesson-dark.png")):
        _theme(page, theme)
        panel.scroll_into_view_if_needed()
        panel.screenshot(path=str(ARTIFACTS / name))
    _theme(page, "JupyterLab Light")
    page.set_viewport_size({"width": 1200, "height": 900})


def test_the_lesson_export_opens_with_no_network(page: Any, tmp_path: Path) -> None:
    from agentcell.render.lesson import export_lesson
    from tests.render.test_static_teaching import MARKERS, transcript

    out = export_lesson(tmp_path / "lesson.html", *((n, transcript(n)) for n in MARKERS))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    expect(page.get_by_role("heading", name=re.compile("^agentcell lesson"))).to_be_visible()
    expect(page.get_by_role("note", name="agentcell: loop-detection nudge").first).to_be_visible()
    expect(page.get_by_role("img", name=re.compile("at the same time as room_of"))).to_be_visible()
    page.emulate_media(media="print")
    pdf_ok = page.evaluate("() => getComputedStyle(document.querySelector('.ac-lane-heads')).position") == "static"
    assert pdf_ok
    settled(page)
    assert requests == [out.as_uri()]  # the document itself, nothing else
    page.screenshot(path=str(ARTIFACTS / "teaching-lesson-export.png"), full_page=False)
