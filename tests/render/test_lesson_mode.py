"""The lesson of lesson-mode runs: the cell that produced each, a contents list, the timeline, injected
faults labelled, predictions kept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agentcell
from agentcell.render.lesson import export_lesson, lesson_html, lesson_run
from agentcell.render.timeline import format_elapsed, format_ms, timeline
from tests.engine.conftest import Call, Script

pytestmark = pytest.mark.anyio

TEMPLATE = "Who leads {{ code }}?\n[[answer|use_tools=true]]"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def lookup(code: str) -> str:
    """Look a module up by its code."""
    return f"{code}: Dr Ada Byron"


async def _run(*, inject: list[str], script: Script) -> agentcell.RunHandle:
    handle = agentcell.start_run(TEMPLATE, model=script.model, tools=[lookup], inject=inject,
                                 context={"code": "PSYC605"}, journal=False)
    await handle
    return handle


async def test_the_lesson_shows_the_template_and_labels_injected_faults(tmp_path: Path) -> None:
    broken = await _run(inject=["model=429:0.1", "lookup=error"],
                        script=Script([Call("lookup", {"code": "PSYC605"})], ["The lookup failed."]))
    plain = await _run(inject=[], script=Script([Call("lookup", {"code": "PSYC605"})], ["Dr Ada Byron."]))
    path = export_lesson(tmp_path / "l.html", ("broken", broken), ("plain", plain))
    text = path.read_text(encoding="utf-8")
    assert text.count("Who leads {{ code }}?") == 2  # each run's own cell
    assert "start_run(model=&#x27;script&#x27;, inject=[&#x27;model=429:0.1&#x27;, &#x27;lookup=error&#x27;])" in text
    assert "&#x27;PSYC605&#x27;" in text  # the value {{ code }} took
    assert '<nav class="ac-lesson-toc"' in text and 'href="#run-1-broken"' in text and 'href="#run-2-plain"' in text
    assert "429 (injected)" in text  # the retry, in the transcript
    assert "InjectedFault" in text and "(injected: --inject lookup=error)" in text  # the tool error
    timeline_part = text[text.index('<section class="ac-timeline"'):]
    assert 'data-kind="backoff" data-injected="true"' in timeline_part
    assert 'data-kind="tool" data-injected="true"' in timeline_part


async def test_one_run_has_no_contents_list() -> None:
    handle = await _run(inject=[], script=Script(["Hello."]))
    assert "<nav" not in lesson_html([lesson_run("one", handle)])


async def test_the_timeline_puts_requests_tools_and_pauses_to_scale() -> None:
    script = Script([Call("lookup", {"code": "A"}), Call("lookup", {"code": "B"})], ["done"])
    handle = agentcell.start_run(TEMPLATE, model=script.model, tools=[lookup], step=True,
                                 context={"code": "A"}, journal=False)
    while await handle.step() is not None:
        pass
    run = lesson_run("r", handle)
    assert run.events is not None
    tl = timeline(run.events)
    kinds = [b.kind for b in sorted(tl.bars, key=lambda b: b.start)]
    assert kinds.count("request") == 2 and kinds.count("tool") == 2
    assert kinds.count("step") == 3  # each of the two calls, request 2 (the first step() passed request 1 at once)
    assert all(b.end is not None and b.end >= b.start for b in tl.bars)
    (second,) = [b for b in tl.bars if b.kind == "request" and b.round == 2]
    (pause,) = [p for p in tl.bars if p.kind == "step" and p.label == "paused before request 2"]
    assert pause.end is not None and second.start >= pause.end  # the request went out when its pause ended


def test_an_mcp_tools_bar_names_its_server() -> None:
    events = [{"kind": "tool_started", "call_id": "1", "tool_name": "git_commit", "server": "git", "t": 1.0},
              {"kind": "tool_completed", "call_id": "1", "tool_name": "git_commit", "t": 2.0},
              {"kind": "tool_started", "call_id": "2", "tool_name": "lookup", "t": 2.0},
              {"kind": "tool_completed", "call_id": "2", "tool_name": "lookup", "t": 3.0}]
    assert [b.label for b in timeline(events).bars] == ["git · git_commit", "lookup"]


def test_times_are_written_as_the_widget_writes_them() -> None:
    assert [format_ms(x) for x in (0.4, 12.5, 840, 1240, 12_345)] == ["0 ms", "13 ms", "840 ms", "1.24 s", "12.3 s"]
    assert [format_elapsed(x) for x in (4.24, 185, 3720)] == ["4.2 s", "3 m 05 s", "1 h 02 m"]


async def test_a_secret_in_the_context_is_masked_in_the_lesson() -> None:
    script = Script(["ok"])
    handle = agentcell.start_run("Use {{ token }} and {{ note }}\n[[answer]]", model=script.model,
                                 context={"token": "abc-very-private", "note": "key sk-abcdefghijklmnop1234"},
                                 journal=False)
    await handle
    html = lesson_html([lesson_run("r", handle)])
    text = html[html.index('<section class="ac-source"'):html.index("</section>")]  # the cell (the wire shows what was sent)
    assert "abc-very-private" not in text and "sk-abcdefghijklmnop1234" not in text
    assert "Use {{ token }} and {{ note }}" in text
    assert re.search(r"token \}\}</code></th><td><code>\*\*\*</code>", text)


async def test_the_guesses_are_in_the_lesson() -> None:
    script = Script([Call("lookup", {"code": "A"})], ["done"])
    handle = agentcell.start_run(TEMPLATE, model=script.model, tools=[lookup], predict=True,
                                 context={"code": "A"}, journal=False)
    handle.predict("answer")  # wrong: the model calls lookup
    handle.go()
    result = await handle
    assert [p["right"] for p in result.predictions] == [False]
    text = lesson_html([lesson_run("r", handle)])
    assert "<h3>Predictions (0 of 1 right)</h3>" in text
    assert "guessed “answer”; the model chose to call lookup — <strong>wrong</strong>" in text
