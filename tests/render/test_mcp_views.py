"""An MCP server's tool in the views without a kernel (what nbconvert/papermill save, the teaching view, the lesson
export, the text fallback): each names the server on the approval and the call, and the teaching view shows the
server's tools (from `tools_listed`) as Python signatures. The events are a real run of `fault_server.py` (named
`notes`; tests/fixtures/transcripts/generate.py). `js/tests/mcp-views.test.js` checks the widget on the same
events; `tests/mcpservers/test_git.py` checks the same views over a real `mcp-server-git` run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcell.render.html import render_html, render_text
from agentcell.render.lesson import lesson_html
from agentcell.render.teaching.model import lesson_slot, offered_tools
from agentcell.render.teaching.view import teaching_html
from agentcell.render.teaching.wire import wire_data
from agentcell.transcript import Transcript

FIXTURE = Path(__file__).parents[1] / "fixtures" / "transcripts" / "mcp-approval.events.json"


def events(*, server: bool = True) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(FIXTURE.read_text())
    if not server:  # the same run as a notebook tool's: no server, no tools_listed
        data = [{k: v for k, v in e.items() if k != "server"} for e in data if e["kind"] != "tools_listed"]
    return data


def test_the_saved_view_names_the_server_on_the_approval_and_the_tool_card() -> None:
    page = render_html(events())
    assert ('approval needed: <strong><code>write_note</code></strong> '
            '<span class="ac-approval-server">(MCP server notes)</span> — approved') in page
    assert 'tool <span class="ac-tool-server" title="MCP server notes">notes · </span><strong><code>write_note' in page
    plain = render_html(events(server=False))
    assert "ac-approval-server" not in plain and "ac-tool-server" not in plain
    assert "approval needed: <strong><code>write_note</code></strong> — approved" in plain


def test_the_text_fallback_names_the_server() -> None:
    text = render_text(events())
    assert "  approval write_note (MCP server notes): approved" in text
    assert '  tool write_note({"text": "buy milk"}) via MCP server notes -> noted: buy milk' in text
    assert "via MCP" not in render_text(events(server=False))


def test_the_teaching_view_lists_the_servers_tools_as_signatures_with_their_server() -> None:
    tr = Transcript.from_wire(events())
    offered = offered_tools(tr)
    assert [t["name"] for t in offered] == ["echo", "write_note", "crash", "boom", "big", "slow", "picture"]
    assert {t["server"] for t in offered} == {"notes"}
    page = teaching_html(tr)
    assert ('<li class="agentcell-tool-decl" data-tool="write_note"><code class="agentcell-tool-name">write_note</code>'
            '<span class="agentcell-tool-server"> · MCP server notes</span>'
            '<pre class="ac-signature" aria-label="Python signature of write_note">def write_note(text: str):\n'
            '    &quot;&quot;&quot;(MCP server notes) Write a note (no hints: a write).&quot;&quot;&quot;\n    ...</pre>') in page
    assert ('<code class="ac-run-call">write_note({&quot;text&quot;: &quot;buy milk&quot;})</code>'
            '<span class="ac-caption ac-run-server">MCP server notes</span>') in page
    assert offered_tools(Transcript.from_wire(events(server=False))) == []  # without tools_listed: nothing to show


def test_the_wire_view_sends_the_servers_schema() -> None:
    tr = Transcript.from_wire(events())
    first = lesson_slot(tr, tr.slots["answer"]).rounds[0]
    found = wire_data(first, "openai", model=tr.model, tools=offered_tools(tr))
    assert found is not None
    request = found[0]
    sent = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
    assert sent["write_note"]["required"] == ["text"]


def test_the_lesson_export_names_the_server_and_shows_the_signature() -> None:
    page = lesson_html([("notes", Transcript.from_wire(events()))])
    assert '<span class="ac-approval-server">(MCP server notes)</span>' in page
    assert "def write_note(text: str):" in page
