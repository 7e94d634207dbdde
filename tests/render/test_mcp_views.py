"""An MCP server's tool in the views without a kernel (what nbconvert/papermill save, the teaching view, the lesson
export, the text fallback): each names the server on the approval and the call, and the teaching view shows the
server's tools (from `tools_listed`) as Python signatures. `js/tests/mcp-views.test.js` checks the widget on the same
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
    assert ('approval needed: <strong><code>git_commit</code></strong> '
            '<span class="ac-approval-server">(MCP server git)</span> — approved') in page
    assert 'tool <span class="ac-tool-server" title="MCP server git">git · </span><strong><code>git_commit' in page
    plain = render_html(events(server=False))
    assert "MCP server" not in plain
    assert "approval needed: <strong><code>git_commit</code></strong> — approved" in plain


def test_the_text_fallback_names_the_server() -> None:
    text = render_text(events())
    assert "  approval git_commit (MCP server git): approved" in text
    assert '  tool git_commit({"repo_path": "/tmp/repo", "message": "Fix typo"}) via MCP server git -> Changes' in text
    assert "MCP server" not in render_text(events(server=False))


def test_the_teaching_view_lists_the_servers_tools_as_signatures_with_their_server() -> None:
    tr = Transcript.from_wire(events())
    assert [(t["name"], t["server"]) for t in offered_tools(tr)] == [("git_status", "git"), ("git_commit", "git")]
    page = teaching_html(tr)
    assert ('<li class="agentcell-tool-decl" data-tool="git_commit"><code class="agentcell-tool-name">git_commit</code>'
            '<span class="agentcell-tool-server"> · MCP server git</span>'
            '<pre class="ac-signature" aria-label="Python signature of git_commit">def git_commit(repo_path: str, '
            'message: str):\n    &quot;&quot;&quot;Records changes to the repository&quot;&quot;&quot;\n    ...</pre>') in page
    assert '<code class="ac-run-call">git_commit({' in page
    assert '<span class="ac-caption ac-run-server">MCP server git</span>' in page
    assert offered_tools(Transcript.from_wire(events(server=False))) == []  # without tools_listed: nothing to show


def test_the_wire_view_sends_the_servers_schema() -> None:
    tr = Transcript.from_wire(events())
    first = lesson_slot(tr, tr.slots["answer"]).rounds[0]
    found = wire_data(first, "openai", model=tr.model, tools=offered_tools(tr))
    assert found is not None
    request = found[0]
    sent = {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}
    assert sent["git_commit"]["required"] == ["repo_path", "message"]


def test_the_lesson_export_names_the_server_and_shows_the_signature() -> None:
    page = lesson_html([("git", Transcript.from_wire(events()))])
    assert '<span class="ac-approval-server">(MCP server git)</span>' in page
    assert "def git_commit(repo_path: str, message: str):" in page
