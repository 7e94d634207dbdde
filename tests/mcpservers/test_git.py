"""PyPI's `mcp-server-git` over a repository the test creates, under `--approve writes`: `git_status` and `git_log`
carry `readOnlyHint` and run without asking; `git_commit` waits, and a denial leaves the repository unchanged."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from agentcell.engine import stream
from agentcell.events import ApprovalRequested, ToolCompleted, ToolsListed
from agentcell.mcp_servers import mcp
from tests.engine.conftest import Call, Script, slot, template

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "user.name", "Test")
    (path / "notes.txt").write_text("first\n")
    git(path, "add", "notes.txt")
    git(path, "commit", "-q", "-m", "first commit")
    (path / "notes.txt").write_text("first\nsecond\n")
    git(path, "add", "notes.txt")
    return path


@pytest.mark.parametrize("approved", [False, True])
async def test_reads_run_freely_and_a_commit_waits_for_approval(repo: Path, approved: bool) -> None:
    asked: list[tuple[str, str | None]] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append((request.tool_name, request.server))  # the approval names the MCP server
        return approved

    server = mcp(f"{sys.executable} -m mcp_server_git --repository {repo}")
    r = str(repo)
    script = Script(
        [Call("git_status", {"repo_path": r}, id="s"), Call("git_log", {"repo_path": r}, id="l")],
        [Call("git_commit", {"repo_path": r, "message": "second commit"}, id="c")],
        ["done"],
    )
    async with asyncio.timeout(120):  # a hang guard
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[server], approve=approve, approve_writes=True)]
    assert events[-1].status == "completed"
    assert asked == [("git_commit", "git")]
    done = {e.tool_name: e for e in events if isinstance(e, ToolCompleted)}
    assert done["git_status"].ok and "notes.txt" in done["git_status"].result
    assert done["git_log"].ok and "first commit" in done["git_log"].result
    log = git(repo, "log", "--format=%s")
    if approved:
        assert done["git_commit"].ok and log.splitlines() == ["second commit", "first commit"]
    else:
        assert "git_commit" not in done and log.splitlines() == ["first commit"]


async def test_every_view_names_the_server_and_the_teaching_view_shows_the_signature(repo: Path) -> None:
    """A real run's events: the slot's MCP tools are listed with their schema and server (`tools_listed`), and the
    saved static view, the teaching view and the lesson export name the server on the approval and the tool call."""
    from agentcell.events.json import to_wire
    from agentcell.render.html import transcript_html
    from agentcell.render.lesson import lesson_html
    from agentcell.render.teaching.view import teaching_html
    from agentcell.transcript import Transcript

    async def approve(request: ApprovalRequested) -> bool:
        return True

    server = mcp(f"{sys.executable} -m mcp_server_git --repository {repo}")
    script = Script([Call("git_commit", {"repo_path": str(repo), "message": "second commit"}, id="c")], ["done"])
    async with asyncio.timeout(120):  # a hang guard
        events = [e async for e in stream(template(slot("answer", use_tools=True)), model=script.model,
                                          toolsets=[server], approve=approve, approve_writes=True)]
    listed = {s["name"]: s for e in events if isinstance(e, ToolsListed) for s in e.tool_schemas}
    assert listed["git_commit"]["server"] == "git"
    assert listed["git_commit"]["parameters_json_schema"]["required"] == ["repo_path", "message"]
    tr = Transcript.from_wire([to_wire(e, t=i / 10) for i, e in enumerate(events)])
    static = transcript_html(tr)
    assert "approval needed: <strong><code>git_commit</code></strong> " \
           '<span class="ac-approval-server">(MCP server git)</span> — approved' in static
    assert '<span class="ac-tool-server" title="MCP server git">git · </span>' in static
    teaching = teaching_html(tr)
    assert '<code class="agentcell-tool-name">git_commit</code><span class="agentcell-tool-server"> · MCP server git' \
        in teaching
    assert "def git_commit(repo_path: str, message: str):" in teaching
    assert '<span class="ac-caption ac-run-server">MCP server git</span>' in teaching
    lesson = lesson_html([("git", tr)])
    assert "(MCP server git)" in lesson and "def git_commit(repo_path: str, message: str):" in lesson
