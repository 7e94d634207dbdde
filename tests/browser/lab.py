"""A real JupyterLab on 127.0.0.1 and Debian's Chromium driven by Playwright.

Never `playwright install`: Playwright is pointed at the system Chromium. The server runs with
isolated config/runtime dirs, a random token, the news toast disabled and widget state saving on,
and is terminated (with its kernels) at the end of the session.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = os.environ.get("AGENTCELL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
# The checkout these tests belong to: its `src` goes first on the kernel's path, so the widget bundle
# (`src/agentcell/static/`) and the Python package under test are this tree's, not an installed copy's.
SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass
class Lab:
    base: str
    token: str
    root: Path

    def url(self, path: str) -> str:
        return f"{self.base}/{path}?token={self.token}&reset"

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        nb = {
            "cells": [
                {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                 "outputs": [], "source": src}
                for i, src in enumerate(cells)
            ],
            "metadata": {"kernelspec": KERNELSPEC},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = self.root / name
        path.write_text(json.dumps(nb))
        return path

    def api(self, method: str, path: str) -> Any:
        req = urllib.request.Request(f"{self.base}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def delete_sessions(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base_dir = tmp_path_factory.mktemp("lab")
    root, cfg, rt = base_dir / "nbs", base_dir / "cfg", base_dir / "rt"
    for d in (root, cfg / "labconfig", rt):
        d.mkdir(parents=True)
    (cfg / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    settings = cfg / "lab" / "user-settings"
    manager = settings / "@jupyter-widgets" / "jupyterlab-manager"
    manager.mkdir(parents=True)
    (manager / "plugin.jupyterlab-settings").write_text(json.dumps({"saveState": True}))
    # JupyterLab 4 detaches cells scrolled out of view ("windowing"); tests read every cell's output.
    tracker = settings / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(cfg), "JUPYTER_RUNTIME_DIR": str(rt),
           "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(cfg / "ws"),
           "AGENTCELL_MODEL": "offline",
           "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    log = open(base_dir / "lab.log", "wb")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", "--allow-root", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    lab = Lab(base=f"http://127.0.0.1:{port}", token=token, root=root)
    deadline = time.monotonic() + 60
    while True:
        try:
            lab.api("GET", "/api/status")
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.terminate()
                raise RuntimeError((base_dir / "lab.log").read_text()[-3000:]) from None
            time.sleep(0.2)
    yield lab
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def page(lab: Lab, tmp_path: Path) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1200, "height": 900})
        pg = ctx.pages[0] if ctx.pages else ctx.new_page()
        pg.set_default_timeout(30_000)
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        pg.js_errors = errors  # type: ignore[attr-defined]
        try:
            yield pg
        finally:
            ctx.close()
            lab.delete_sessions()


def open_notebook(page: Any, lab: Lab, name: str) -> None:
    """Open a notebook and wait for its kernel to be idle and connected."""
    page.goto(lab.url(f"lab/tree/{name}"))
    page.wait_for_function(
        "() => { const k = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;"
        " return k && k.status === 'idle' && k.connectionStatus === 'connected'; }", timeout=60_000)


def run_cell(page: Any, index: int) -> None:
    """Run cell `index` through JupyterLab's command registry (fire and forget)."""
    page.evaluate(
        "(i) => { const p = window.jupyterapp.shell.currentWidget; p.content.activeCellIndex = i;"
        " void window.jupyterapp.commands.execute('notebook:run-cell'); }", index)


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def wait_cell_done(page: Any, index: int) -> None:
    sync_api.expect(cell(page, index).locator(".jp-InputPrompt")).to_have_text(
        re.compile(r"\[\d+\]:"), timeout=60_000)


def dismiss_kernel_dialog(page: Any) -> None:
    """A notebook without a kernelspec asks for a kernel: answer "No Kernel"."""
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    dialog = page.locator(".jp-Dialog")
    try:
        dialog.wait_for(timeout=5_000)
    except sync_api.TimeoutError:
        return
    no_kernel = dialog.get_by_role("button", name=re.compile("No Kernel", re.I))
    if no_kernel.count():
        no_kernel.first.click()
    else:
        page.keyboard.press("Escape")
    sync_api.expect(dialog).to_have_count(0)


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=False)
    return path


def word_count(locator: Any) -> int:
    return len((locator.text_content(timeout=5_000) or "").split())


def wait_for_words(locator: Any, n: int, *, timeout: float = 30.0) -> int:
    """Wait until the element holds more than `n - 1` words; re-resolves the locator on every poll.

    (An element handle would go stale when the view re-renders, e.g. on a snapshot, and never update.)
    """
    deadline = time.monotonic() + timeout
    while True:
        count = word_count(locator) if locator.count() else 0
        if count >= n:
            return count
        if time.monotonic() > deadline:
            raise TimeoutError(f"{locator} held {count} words after {timeout} s; wanted {n}")
        time.sleep(0.05)


def painted(page: Any) -> None:
    """Return once the page has rendered two more frames: whatever a handler, a theme change or a view
    queued for its next render has run. A barrier on the page's own clock, not a pause of a guessed length."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(null))))")


def settled(page: Any) -> None:
    """Return once the page is loaded and has made no network request for Playwright's quiet period, then
    rendered: a document that would fetch something (a payload's image, a stylesheet) has asked by then."""
    page.wait_for_load_state("networkidle")
    painted(page)


class KernelFrames:
    """The kernel messages the page receives over its websockets, kept as text so a test can wait until
    one has arrived (the `final` trait a run sends after its last event) instead of pausing for it."""

    def __init__(self, page: Any) -> None:
        """Make it before the page opens the notebook: a socket opened earlier is not seen."""
        self.frames: list[str] = []
        self.sockets: list[Any] = []
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        self.sockets.append(ws)
        ws.on("framereceived", self._frame)

    def _frame(self, payload: str | bytes) -> None:
        self.frames.append(_text(payload))

    def wait_for(self, *needles: str, timeout: float = 30.0) -> None:
        """Return once a frame holding every needle has arrived (the sync API delivers events only inside
        its calls, and `wait_for_event` registers before it lets them in, so none slips between)."""
        if any(all(n in frame for n in needles) for frame in self.frames):
            return
        (ws,) = [ws for ws in self.sockets if "/channels" in ws.url and not ws.is_closed()][-1:]
        ws.wait_for_event("framereceived", predicate=lambda p: all(n in _text(p) for n in needles),
                          timeout=timeout * 1000)


def _text(payload: str | bytes) -> str:
    return payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
