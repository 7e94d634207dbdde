"""An MCP server's write waits in the browser: `mcp-server-git`'s `git_commit` under `--approve writes` shows an
approval card in JupyterLab that names the server; clicking Approve lets the commit run, and `git log` shows it.
The teaching view then shows the server's tools as Python signatures."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import Lab, cell, open_notebook, run_cell, sync_api, wait_cell_done

pytestmark = pytest.mark.browser
expect = sync_api.expect

SETUP = r'''
%load_ext agentcell
import json, subprocess, tempfile
from pathlib import Path
import agentcell
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.models.function import DeltaToolCall, FunctionModel

REPO = Path(tempfile.mkdtemp()) / "repo"
REPO.mkdir()
def git(*args):
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout
git("init", "-q", "-b", "main"); git("config", "user.email", "t@example.com"); git("config", "user.name", "T")
(REPO / "a.txt").write_text("one\n"); git("add", "a.txt"); git("commit", "-q", "-m", "first")
(REPO / "a.txt").write_text("one\ntwo\n"); git("add", "a.txt")

async def _commits(messages, info):
    if not any(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", ())):
        yield {0: DeltaToolCall(name="git_commit", tool_call_id="c1",
                                json_args=json.dumps({"repo_path": str(REPO), "message": "Commit from the browser"}))}
    else:
        yield "Committed."
commits = FunctionModel(stream_function=_commits, model_name="commits")
git_server = agentcell.mcp(f"python -m mcp_server_git --repository {REPO}")
'''

CELL = "%%agent -m commits --toolsets git_server --approve writes\nCommit the staged change. [[answer|use_tools=true]]"


def test_clicking_approve_on_git_commit_makes_the_commit(lab: Lab, page: Any) -> None:
    lab.write_notebook("mcp-approve.ipynb", [SETUP, CELL, "print(git('log', '--format=%s'))", "%agent mcp stop"])
    open_notebook(page, lab, "mcp-approve.ipynb")
    run_cell(page, 0)
    wait_cell_done(page, 0)
    run_cell(page, 1)
    widget = cell(page, 1).locator(".agentcell")
    expect(widget.locator('.agentcell-approval[data-approval="pending"]')).to_be_visible(timeout=90_000)
    expect(widget.locator(".agentcell-status")).to_have_text("waiting for your approval: git_commit")
    expect(widget.locator(".agentcell-approval-head")).to_have_text("approval needed: git_commit (MCP server git)")
    widget.get_by_role("button", name="Approve git_commit").click()
    expect(widget).to_have_attribute("data-status", "completed", timeout=60_000)
    expect(widget.locator(".agentcell-approval-outcome")).to_have_text("approved")
    card = widget.locator('.agentcell-tool[data-tool="git_commit"]')
    expect(card.locator(".agentcell-tool-server")).to_have_text("git · ")  # the card names the MCP server
    widget.locator(".agentcell-teach").click()  # the teaching view: the server's tools as Python signatures
    decl = widget.locator('.agentcell-tool-decl[data-tool="git_commit"]')
    expect(decl.locator(".agentcell-tool-server")).to_contain_text("MCP server git")
    expect(decl.locator(".ac-signature")).to_contain_text("def git_commit(repo_path: str, message: str):")
    run_cell(page, 2)
    wait_cell_done(page, 2)
    expect(cell(page, 2).locator(".jp-OutputArea-output")).to_have_text("Commit from the browser\nfirst\n")
    run_cell(page, 3)
    wait_cell_done(page, 3)
    expect(cell(page, 3).locator(".jp-OutputArea-output")).to_contain_text("Stopped MCP server(s): git.")
    assert page.js_errors == []
