"""The widget's JS unit tests (vitest, `js/tests/`), run from pytest so one runner reports everything."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # the whole vitest suite: on its own, `npx vitest run` or `npx vitest run js/tests/NAME`
def test_vitest_suite_passes() -> None:
    npx = shutil.which("npx")
    assert npx is not None, "Node/npm are needed for the JS tests (scripts/setup installs the packages)"
    assert (ROOT / "node_modules").exists(), "run `npm ci` first (scripts/setup does)"
    proc = subprocess.run([npx, "vitest", "run", "--reporter=dot"], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)  # a hang guard: the suite takes ~110 s idle, several times that under load
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout
