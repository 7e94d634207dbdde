"""agentcell from a plain Python script (no kernel, no event loop) against the real server.

The script runs in its own interpreter, as a user's script would: `complete()` makes and closes its own
event loop, and whatever it leaves behind at exit is that process's, not the test session's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.real_model.llama_server import ROOT, LlamaServer

pytestmark = pytest.mark.real_model

SCRIPT = """
import json, sys
import agentcell

result = agentcell.complete("Say hello in one short sentence.\\n[[answer]]", model=sys.argv[1])
print(json.dumps({"status": result.status, "error": result.error, "answer": result.answer,
                  "by_name": result["answer"], "model": result.model}))
"""

SCRIPT_GUARD_S = 300
"""A hang guard for the whole script (imports, one answer), not a time limit."""


def test_complete_in_a_script_runs_a_template_to_the_end(server: LlamaServer) -> None:
    mark = server.log_mark()
    # This checkout's src first, so a worktree's script imports its own agentcell.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, server.model()], capture_output=True, text=True, env=env, timeout=SCRIPT_GUARD_S
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "completed", result["error"]
    assert isinstance(result["answer"], str) and result["answer"].strip()
    assert result["by_name"] == result["answer"]
    assert result["model"] == server.model()
    assert server.log_since(mark).count("POST /v1/chat/completions HTTP/1.1") == 1
