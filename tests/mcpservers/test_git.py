"""PyPI's `mcp-server-git` over a repository the test creates, under `--approve writes`: `git_status` and `git_log`
carry `readOnlyHint` and run without asking; `git_commit` waits, and a denial leaves the repository unchanged."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from agentcell.engine import stream
from agentcell.events import ApprovalRequested, ToolCompleted
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
    asked: list[str] = []

    async def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
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
    assert asked == ["git_commit"]
    done = {e.tool_name: e for e in events if isinstance(e, ToolCompleted)}
    assert done["git_status"].ok and "notes.txt" in done["git_status"].result
    assert done["git_log"].ok and "first commit" in done["git_log"].result
    log = git(repo, "log", "--format=%s")
    if approved:
        assert done["git_commit"].ok and log.splitlines() == ["second commit", "first commit"]
    else:
        assert "git_commit" not in done and log.splitlines() == ["first commit"]
