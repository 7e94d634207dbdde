"""Jupyter Notebook 7 as a front end, in Chromium: the widget renders, streams and stops; a saved notebook keeps it.

Notebook 7 is built from JupyterLab's components and widget manager, so the same selectors and
commands work (`window.jupyterapp`, `notebook:run-cell`); this checks that it really is so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import ARGS, CHROMIUM, KERNELSPEC, _free_port, cell, screenshot, sync_api, wait_for_words

pytestmark = pytest.mark.browser
pytest.importorskip("notebook")
expect = sync_api.expect

SRC = Path(__file__).resolve().parents[2] / "src"
CELLS = [
    "%load_ext agentcell",
    "%%agent -o run\nExplain, in several sentences, how a tool-calling loop works.\n[[answer]]",
    "import agentcell\nagentcell.show('Say hello to Zanzibar [[answer]]')",
]


@pytest.fixture
def notebook7(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    """`jupyter notebook` on 127.0.0.1 with a random token; yields (base URL, token, root folder)."""
    root, cfg, rt = tmp_path / "nbs", tmp_path / "cfg", tmp_path / "rt"
    for d in (root, cfg, rt):
        d.mkdir(parents=True)
    port, token = _free_port(), os.urandom(16).hex()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(cfg), "JUPYTER_RUNTIME_DIR": str(rt),
           "AGENTCELL_MODEL": "offline", "AGENTCELL_JOURNAL": str(tmp_path / "journal"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    log = open(tmp_path / "notebook.log", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "notebook", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", "--allow-root", f"--ServerApp.root_dir={root}",
         "--JupyterNotebookApp.expose_app_in_browser=True"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError((tmp_path / "notebook.log").read_text()[-3000:]) from None
                time.sleep(0.2)
        yield base, token, root
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def run_cell(page: Any, index: int) -> None:
    page.evaluate(
        "(i) => { const p = window.jupyterapp.shell.currentWidget; p.content.activeCellIndex = i;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }", index)


def test_notebook7_streams_stops_and_saves_the_transcript(notebook7: tuple[str, str, Path], tmp_path: Path) -> None:
    base, token, root = notebook7
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {}, "outputs": [],
                     "source": src} for i, src in enumerate(CELLS)],
          "metadata": {"kernelspec": KERNELSPEC}, "nbformat": 4, "nbformat_minor": 5}
    (root / "nb7.ipynb").write_text(json.dumps(nb))
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
                                                   args=ARGS, viewport={"width": 1200, "height": 900})
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(f"{exc} {exc.stack}"))
        try:
            page.goto(f"{base}/notebooks/nb7.ipynb?token={token}")
            page.wait_for_function(
                "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
                " return k && k.status === 'idle' && k.connectionStatus === 'connected'; }", timeout=60_000)
            # Notebook 7.6.5 itself throws one "reading 'schema'" error while loading (before any cell runs,
            # agentcell or not); only errors after that count.
            at_load = len(errors)
            run_cell(page, 0)
            run_cell(page, 1)
            widget = cell(page, 1).locator(".agentcell")
            expect(widget).to_have_attribute("data-status", "running", timeout=30_000)
            wait_for_words(widget.locator('.agentcell-answer[data-slot="answer"]'), 6)
            widget.locator(".agentcell-stop").click()
            expect(widget).to_have_attribute("data-status", "stopped", timeout=5_000)

            run_cell(page, 2)
            shown = cell(page, 2).locator(".agentcell")
            expect(shown).to_have_attribute("data-status", "completed", timeout=60_000)
            expect(shown).to_contain_text("Say hello to Zanzibar")
            screenshot(page, "notebook7.png")
            page.evaluate("() => { void window.jupyterapp.commands.execute('docmanager:save'); }")
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                saved = json.loads((root / "nb7.ipynb").read_text())
                outputs = saved["cells"][2]["outputs"]
                htmls = [o.get("data", {}).get("text/html", "") for o in outputs]
                if any('data-status="completed"' in "".join(h) for h in htmls):
                    break
                time.sleep(0.2)
            assert any("Say hello to Zanzibar" in "".join(h) for h in htmls)
            assert errors[at_load:] == []
        finally:
            ctx.close()
