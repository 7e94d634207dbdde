"""The sdist carries the built widget bundle, so installing it needs no Node; the package is marked typed."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.skipif(
        not (ROOT / "src/agentcell/static/widget.js").exists(), reason="the JS bundle is not built (npm run build)"
    ),
    pytest.mark.slow,  # builds an sdist and installs it into a fresh venv
]


def test_sdist_installs_without_node_and_ships_the_bundle(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    (sdist,) = dist.glob("agentcell-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert any(n.endswith("src/agentcell/static/widget.js") for n in names)
    assert any(n.endswith("js/src/widget.js") for n in names)
    assert any(n.endswith("src/agentcell/py.typed") for n in names)

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    # Only the fresh venv's bin on PATH: no node, no npm (/bin is /usr/bin on merged-/usr Debian).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = str(env_dir / "bin")
    proc = subprocess.run([str(env_dir / "bin/python"), "-m", "pip", "install", "-q", "--no-deps", str(sdist)],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    bundle = site / "agentcell/static/widget.js"
    assert bundle.exists() and bundle.stat().st_size > 10_000
    assert (site / "agentcell/static/widget.css").exists()
    assert (site / "agentcell/static/batch.js").stat().st_size > 10_000  # the batch widget's own bundle
    assert (site / "agentcell/static/batch.css").exists()
    # PEP 561: type checkers read agentcell's own annotations (the code is mypy --strict).
    assert (site / "agentcell/py.typed").exists()
