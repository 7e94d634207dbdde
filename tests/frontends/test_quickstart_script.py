"""`scripts/run_notebook.py` (what `scripts/quickstart` runs): its verdict first, no kernel noise, the repository clean.

Runs the real quickstart notebook in a real kernel (marked `kernel`), as `scripts/quickstart` does after
its install step.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--", "notebooks"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout


def test_the_quickstart_prints_its_verdict_first_and_leaves_the_repository_as_it_was(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for var in ("AGENTCELL_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    before = _status()
    done = subprocess.run([sys.executable, "scripts/run_notebook.py", "notebooks/quickstart.ipynb"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("OK: all ") and "code cells of notebooks/quickstart.ipynb ran without an error" in first
    assert "status: stopped" in done.stdout and "status: completed" in done.stdout  # the answers follow
    assert done.stderr == ""  # no "[IPKernelApp] WARNING | Kernel is running over TCP without encryption"
    assert _status() == before  # the tracked notebook untouched; the executed copy is git-ignored
