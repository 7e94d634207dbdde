"""The saved-notebook rendering: escaped static HTML + text, the final output bundle, provenance."""

from __future__ import annotations

import asyncio
import html.parser
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel

import agentcell
from agentcell import readonly, stream
from agentcell.events import Limits, ProcessingComplete, RunStarted, TokenDelta, Usage
from agentcell.events.json import WireEvent, to_wire
from agentcell.frontends.widget.widget import WIDGET_VIEW_MIME, AgentWidget
from agentcell.render.html import render_html, render_text
from agentcell.result import RunResult

XSS = [
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "<a href=\"javascript:alert(1)\">x</a>",
    "<style>body{display:none}</style>",
    "<iframe src=//evil.example></iframe>",
    "</pre><script>alert(1)</script>",
    "</details><b onmouseover=alert(1)>x</b>",
    "<div style=\"background:url(javascript:alert(1))\">",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
]


async def _stream_fn(messages: list[Any], info: AgentInfo) -> AsyncIterator[Any]:
    done = any(isinstance(p, ToolReturnPart) for m in messages if isinstance(m, ModelRequest) for p in m.parts)
    if not done:
        yield {99: DeltaThinkingPart(content="Thinking " + XSS[0])}
        yield "Let me look that up " + XSS[1]
        yield {0: DeltaToolCall(name="lookup", json_args=json.dumps({"code": XSS[2]}), tool_call_id="c1")}
        return
    for word in ["## Result\n\n", "**Dr Ada** ", "leads ", XSS[3], "\n\n", XSS[4]]:
        yield word


@readonly
def lookup(code: str) -> str:
    """Look up a course."""
    return f"{code} is led by Dr Ada {XSS[5]} {XSS[6]} {XSS[7]}"


async def _run_events() -> tuple[list[WireEvent], RunResult]:
    events: list[WireEvent] = []
    result: RunResult | None = None
    async for ev in stream("Who leads PSYC605? [[answer|use_tools=true]]",
                           model=FunctionModel(stream_function=_stream_fn), tools=[lookup]):
        events.append(to_wire(ev, t=0.5))
        if isinstance(ev, ProcessingComplete):
            result = ev.result
    assert result is not None
    return events, result


@pytest.fixture(scope="module")
def run_events() -> tuple[list[WireEvent], RunResult]:
    return asyncio.run(_run_events())


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += attrs

    def handle_data(self, data: str) -> None:
        self.text += data


def _parse(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    return parser


def test_static_html_shows_every_part_of_the_run(run_events: tuple[list[WireEvent], RunResult]) -> None:
    events, _ = run_events
    kinds = {e["kind"] for e in events}
    assert {"thinking_delta", "slot_retracted", "tool_started", "tool_completed", "token_delta"} <= kinds
    parsed = _parse(render_html(events))
    assert "lookup" in parsed.text
    assert "Thinking" in parsed.text  # thinking, in a <details>
    assert "Let me look that up" in parsed.text  # the retracted narration
    assert "narration" in parsed.text
    assert "is led by Dr Ada" in parsed.text  # the tool result
    assert "Dr Ada leads" in parsed.text and "**" not in parsed.text.split("Result")[-1]  # Markdown rendered
    assert "done" in parsed.text and "2 requests" in parsed.text


def test_static_answer_is_rendered_markdown_like_the_live_view(run_events: tuple[list[WireEvent], RunResult]) -> None:
    markup = render_html(run_events[0])
    assert '<h2 class="jp-toc-ignore">Result</h2>' in markup  # not listed in JupyterLab's table of contents
    assert "<strong>Dr Ada</strong> leads" in markup
    # Raw HTML in the answer stays text: the model's link and style are shown, not made.
    assert "&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;" in markup
    assert "&lt;style&gt;body{display:none}&lt;/style&gt;" in markup


def test_static_html_escapes_every_payload(run_events: tuple[list[WireEvent], RunResult]) -> None:
    events, _ = run_events
    warning = {"kind": "run_warning", "run_id": events[0]["run_id"], "slot": None, "message": XSS[8], "t": 1}
    failed = {"kind": "slot_failed", "run_id": events[0]["run_id"], "slot": XSS[9], "status": "failed",
              "error": XSS[0], "partial": XSS[1], "t": 1}
    markup = render_html([*events, warning, failed], {"model": XSS[2]})
    parsed = _parse(markup)
    # Only our own tags, and no attribute that could run or load anything.
    assert parsed.tags <= {"div", "style", "strong", "code", "details", "summary", "pre", "em", "br", "p", "span",
                           "section", "h2", "h3", "h4", "h5", "ul", "li"}  # h4…li: the folded teaching view
    teaching = ("role", "aria-label", "tabindex", "style", "data-marker", "data-lane", "data-step", "data-role",
                "data-new", "data-tool", "data-format", "data-from", "data-to", "data-concurrent")
    for name, value in parsed.attrs:
        assert name in ("class", "data-status", "data-slot", "data-round", "data-item", "open", *teaching), name
        assert value is None or "javascript" not in value.lower()
        if name == "style":  # only the time bars' own geometry
            assert value is not None and re.fullmatch(r"left:[\d.]+%;width:[\d.]+%", value), value
    assert markup.count("<style>") == 1  # ours, not the model's
    for payload in XSS[:9]:
        assert payload in parsed.text, payload  # shown as text, intact


def test_plain_text_fallback(run_events: tuple[list[WireEvent], RunResult]) -> None:
    text = render_text(run_events[0])
    assert "tool lookup(" in text and "is led by Dr Ada" in text
    assert "**Dr Ada** leads" in text
    assert text.startswith("%%agent · function")


class _Display:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], dict[str, Any], str]] = []

    def display(self, data: dict[str, Any], *, raw: bool, display_id: str, metadata: dict[str, Any] | None = None) -> None:
        assert raw
        self.calls.append(("display", data, metadata or {}, display_id))

    def update_display(self, data: dict[str, Any], *, raw: bool, metadata: dict[str, Any], display_id: str) -> None:
        assert raw
        self.calls.append(("update", data, metadata, display_id))


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> _Display:
    import IPython.display

    fake = _Display()
    monkeypatch.setattr(IPython.display, "display", fake.display)
    monkeypatch.setattr(IPython.display, "update_display", fake.update_display)
    return fake


def test_show_puts_out_the_view_and_a_static_twin_updated_with_provenance(
    shown: _Display, run_events: tuple[list[WireEvent], RunResult]
) -> None:
    _, result = run_events
    w = AgentWidget(provenance={"template_sha256": "ab" * 32, "api_key": "sk-secret", "auth_token": "t0k"})
    w.show()
    (k1, view, md1, id1), (k2, twin, md2, id2) = shown.calls
    assert (k1, id1, k2, id2) == ("display", w.display_id, "display", w.static_display_id)
    assert view[WIDGET_VIEW_MIME]["model_id"] == w.model_id and "text/html" not in view
    assert view["text/plain"] == ""  # where the view cannot render (untrusted, no kernel): no stray placeholder
    assert md1 == md2 == {} and WIDGET_VIEW_MIME not in twin
    assert 'data-status="running"' in twin["text/html"] and twin["text/plain"] == ""
    w.apply(RunStarted(run_id=result.run_id, model=result.model))
    w.apply(TokenDelta(run_id=result.run_id, slot="answer", text="<b>hi</b>"))
    w.apply(ProcessingComplete(run_id=result.run_id, status="completed", result=result))
    assert len(shown.calls) == 3  # the view itself is never re-sent (no re-render, no flash)
    kind, data, metadata, display_id = shown.calls[-1]
    assert (kind, display_id) == ("update", w.static_display_id)
    assert WIDGET_VIEW_MIME not in data
    assert "&lt;b&gt;hi&lt;/b&gt;" in data["text/html"] and "<b>hi</b>" not in data["text/html"]
    assert "<b>hi</b>" in data["text/plain"]
    facts = metadata["agentcell"]
    assert facts["template_sha256"] == "ab" * 32
    assert facts["model"] == "function::_stream_fn"
    assert facts["agentcell_version"] == agentcell.__version__
    assert facts["limits"] == {"requests": 20, "tool_calls": 20, "output_tokens": 250_000}
    assert facts["usage"]["requests"] == 2 and facts["status"] == "completed"
    dumped = json.dumps(metadata)
    assert "sk-secret" not in dumped and "t0k" not in dumped


def test_the_twin_keeps_a_long_answer_whole_in_its_html_and_the_text_budget_in_its_plain_text(
    shown: _Display, run_events: tuple[list[WireEvent], RunResult]
) -> None:
    from agentcell.render.html import TEXT_BUDGET

    _, result = run_events
    answer = "".join(f"Line {i} of a long answer.\n" for i in range(2 * TEXT_BUDGET // 20))
    w = AgentWidget()
    w.show()
    w.apply(RunStarted(run_id=result.run_id, model=result.model))
    w.apply(TokenDelta(run_id=result.run_id, slot="answer", text=answer))
    w.apply(ProcessingComplete(run_id=result.run_id, status="completed", result=result))
    data = shown.calls[-1][1]
    last = answer.splitlines()[-1]
    assert last in data["text/html"] and last not in data["text/plain"]
    assert "Line 0 of a long answer." in data["text/plain"] and len(data["text/plain"]) < TEXT_BUDGET + 2_000
    assert "more characters of this answer: the HTML of this output holds all of it]" in data["text/plain"]


def test_the_next_cell_republishes_the_final_output_without_rendering_it_again(
    shown: _Display, run_events: tuple[list[WireEvent], RunResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentcell.render.html as static_view

    _, result = run_events
    w = AgentWidget()
    w.show()
    w.tracked = True  # what `show` sets when an IPython shell keeps it for the next cell boundary
    w.apply(RunStarted(run_id=result.run_id, model=result.model))
    w.apply(TokenDelta(run_id=result.run_id, slot="answer", text="Dr Ada."))
    w.apply(ProcessingComplete(run_id=result.run_id, status="completed", result=result))
    renders: list[int] = []
    for name in ("render_html", "render_text", "transcript_html", "transcript_text"):
        original = getattr(static_view, name)
        monkeypatch.setattr(static_view, name, lambda *a, _f=original, **k: renders.append(1) or _f(*a, **k))
    assert w.republish() is True
    assert renders == []
    assert shown.calls[-1] == shown.calls[-2]  # the end's update, published again as it was
    assert w.republish() is True  # a second boundary (not asked by SavedOutputs, which forgets the view) renders anew
    assert len(renders) == 2 and shown.calls[-1][1] == shown.calls[-2][1]


def test_ipython_display_goes_through_show(shown: _Display) -> None:
    w = AgentWidget()
    w._ipython_display_()
    assert [c[3] for c in shown.calls] == [w.display_id, w.static_display_id] and w.shown


def test_not_shown_means_no_update(shown: _Display) -> None:
    w = AgentWidget()
    result = RunResult(run_id="r", status="stopped", usage=Usage(requests=1), limits=Limits())
    w.apply(ProcessingComplete(run_id="r", status="stopped", result=result))
    assert shown.calls == []
    assert w.output_metadata["status"] == "stopped"


def test_final_trait_carries_the_exact_transcript(
    shown: _Display, run_events: tuple[list[WireEvent], RunResult]
) -> None:
    events, result = run_events
    assert "transcript" not in events[-1]  # not in the live batch: it travels once, in `final`
    w = AgentWidget()
    w.apply(RunStarted(run_id=result.run_id, model=result.model))
    w.apply(ProcessingComplete(run_id=result.run_id, status="completed", result=result))
    final = w.final[-1]
    assert final["kind"] == "processing_complete"
    assert final["transcript"]["openai"] == result.to_openai()
    messages = ModelMessagesTypeAdapter.validate_python(final["transcript"]["pydantic_ai"])
    assert len(messages) == len(result.messages) >= 4
    assert json.loads(result.to_json())["messages"] == final["transcript"]["pydantic_ai"]
    assert "transcript" not in w.wire_snapshot()[-1]


@pytest.mark.anyio
async def test_saved_view_of_a_resumed_run_shows_both_segments_like_the_live_view() -> None:
    from agentcell.engine import start_run
    from agentcell.transcript import Transcript
    from tests.engine.conftest import Call, Script, Sleep, slot, template

    def find(q: str) -> str:
        """Find q."""
        return f"found {q}"

    script = Script(["A1"], [Call("find", {"q": "x"}, id="k1")], ["partial ", Sleep(10), "never"], ["B **final**"])
    run = start_run(template(slot("a", prompt="First?"), slot("b", prompt="Second?", use_tools=True)),
                    model=script.model, tools=[find], journal=False)
    widget = AgentWidget()
    async for event in run.events():
        widget.apply(event)
        if isinstance(event, TokenDelta) and event.slot == "b":
            run.cancel()
    second = run.resume()
    async for event in second.events():
        widget.apply(event)
    data, _ = widget.static_bundle()
    markup = data["text/html"]
    assert 'data-status="completed"' in markup.split(">")[0]
    assert "resumed (segment 2)" in markup and "kept: a" in markup and "restarting: b" in markup
    assert "found x" in markup  # segment 1's finished tool round of slot b is kept
    assert "B <strong>final</strong>" in markup and "partial " not in _parse(markup).text
    # The same transcript the engine's live reducer holds across both segments.
    def timeless(value: Any) -> Any:  # the widget and the engine read their own clocks
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k not in ("t", "start_t")}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    saved, live = Transcript.from_wire(widget.final).to_json(), run.transcript.to_json()
    assert timeless(saved["slots"]) == timeless(live["slots"])


class _Unfolded(html.parser.HTMLParser):
    """The tags a reader sees with every stylesheet stripped (an untrusted notebook) and nothing unfolded."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # inside a <details>: folded, only its <summary> shows
        self.seen: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "details":
            self.depth += 1
        elif self.depth == 0:
            self.seen.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.depth -= 1


def test_the_saved_view_reads_as_text_without_its_stylesheet(run_events: tuple[list[WireEvent], RunResult]) -> None:
    """JupyterLab strips `<style>` from an untrusted notebook: no heading may then shout a slot's label."""
    events, _ = run_events
    markup = render_html(events)
    unfolded = _Unfolded()
    unfolded.feed(markup)
    headings = [tag for tag in unfolded.seen if re.fullmatch(r"h\d", tag)]
    assert headings == ["h2"], unfolded.seen  # only the answer's own `## Result`, none of agentcell's labels
    assert re.search(r'<p class="ac-slot-name"><strong>answer</strong> <span class="ac-muted">text · [^<]+</span></p>',
                     markup)
