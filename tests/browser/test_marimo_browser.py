"""marimo as a front end, in Chromium: a re-run `show()` cell replaces its run; a reopened notebook keeps it.

Each test starts `marimo edit --headless` on 127.0.0.1 (no token, its own config, cache and journal
folders, the worktree's `src` on `PYTHONPATH`) on a notebook file it writes, and drives it with
Playwright and Debian's Chromium. marimo's edit mode runs nothing until asked (Run all), and keeps a
session cache (`__marimo__/session/NB.py.json`) that a reopened notebook shows before it runs.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import ARGS, ARTIFACTS, CHROMIUM, sync_api
from tests.openai_server import FakeOpenAI, Reply, Text

pytestmark = pytest.mark.browser
pytest.importorskip("marimo")
expect = sync_api.expect

SRC = Path(__file__).resolve().parents[2] / "src"
SLOW = Reply(Text("word " * 600, pieces=600, delay=0.02))

NOTEBOOK = '''import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import asyncio

    import agentcell
    import marimo as mo
    return agentcell, asyncio, mo


@app.cell
def _(agentcell):
    view = agentcell.show("{prompt} [[answer]]", model="{model}")
    view
    return (view,)


@app.cell
def _(asyncio, mo):
    _names = [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("agentcell-")]
    mo.md(f"probe runs={{sum(n.startswith('agentcell-run-') for n in _names)}} "
          f"views={{sum(n.startswith('agentcell-view-') for n in _names)}}")
    return


if __name__ == "__main__":
    app.run()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def marimo_edit(folder: Path, notebook: str = "nb.py") -> Iterator[str]:
    """`marimo edit --headless` on `folder/notebook`; yields its base URL, stops it (and its kernel) after."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC), "HOME": str(folder), "XDG_CONFIG_HOME": str(folder / "config"),
           "XDG_CACHE_HOME": str(folder / "cache"), "XDG_STATE_HOME": str(folder / "state"),
           "AGENTCELL_JOURNAL": str(folder / "journal")}
    log = open(folder / f"marimo-{port}.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "marimo", "edit", "--headless", "--host", "127.0.0.1", "--port", str(port),
         "--no-token", "--skip-update-check", "--no-sandbox", notebook],
        cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError((folder / f"marimo-{port}.log").read_text()[-3000:]) from None
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def write_notebook(folder: Path, *, prompt: str, model: str) -> Path:
    (folder / ".marimo.toml").write_text('[display]\ntheme = "system"\n\n[runtime]\nauto_instantiate = false\n')
    path = folder / "nb.py"
    path.write_text(NOTEBOOK.format(prompt=prompt, model=model))
    return path


@contextmanager
def browser_page(folder: Path, *, dark: bool = False) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(folder / f"profile-{'dark' if dark else 'light'}-{time.monotonic_ns()}"), executable_path=CHROMIUM,
            headless=True, args=ARGS, viewport={"width": 1200, "height": 900},
            color_scheme="dark" if dark else "light")
        page = ctx.pages[0] if ctx.pages else ctx.new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.js_errors = errors
        try:
            yield page
        finally:
            ctx.close()


def cell(page: Any, code: str) -> Any:
    """The marimo cell whose code contains `code`."""
    return page.locator("[data-cell-id]").filter(has=page.locator(".cm-content", has_text=code))


def run_cell(page: Any, code: str) -> None:
    """Click the cell's run button, which marimo shows only while the cell is hovered: scrolling it into view can
    move it from under the pointer (then the click waits for a button that stays hidden), so hover again and retry."""
    target = cell(page, code)
    button = target.get_by_test_id("run-button").locator("visible=true").first
    for _ in range(5):
        target.hover()
        try:
            button.click(timeout=5_000)
            return
        except sync_api.TimeoutError:
            continue
    raise AssertionError(f"the run button of the cell with {code!r} never stayed visible to be clicked")


def run_all(page: Any) -> None:
    """Run every stale cell (marimo's edit mode runs nothing on open); the button wakes once the kernel is up."""
    button = page.get_by_test_id("chrome-controls-bottom-right").get_by_test_id("run-button")
    expect(button).not_to_have_class(re.compile(r"\binactive-button\b"), timeout=60_000)
    button.click()


def probe(page: Any, want: str, *, timeout: float = 20.0) -> str:
    """Run the probe cell until its output reads `want` (a task being cancelled may take a moment to end)."""
    deadline = time.monotonic() + timeout
    while True:
        run_cell(page, "all_tasks")
        output = cell(page, "all_tasks").locator(".output-area")
        try:
            expect(output).to_contain_text("probe runs=", timeout=5_000)
        except AssertionError:
            continue
        seen = re.search(r"probe runs=\d+ views=\d+", output.text_content() or "")
        if seen and seen.group(0) == want:
            return want
        if time.monotonic() > deadline:
            raise AssertionError(f"probe said {seen and seen.group(0)!r}, wanted {want!r}")
        time.sleep(0.3)


def shot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=False)
    return path


def _luminance(css_color: str) -> float:
    """Relative luminance (WCAG) of an `rgb(…)`/`rgba(…)` computed colour."""
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css_color)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def journal_status(folder: Path, run_id: str) -> str | None:
    from agentcell.journal import load

    return load(run_id, path=folder / "journal").status


def test_rerunning_a_show_cell_mid_stream_leaves_one_run_and_closes_the_old_request(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.script(SLOW, SLOW)
        write_notebook(tmp_path, prompt="Tell a long story", model=f"openai-compat:fake-model@{server.base_url}")
        with marimo_edit(tmp_path) as base, browser_page(tmp_path) as page:
            page.goto(base)
            run_all(page)
            show_cell = cell(page, "agentcell.show(")
            widget = show_cell.locator(".agentcell")
            expect(widget).to_have_attribute("data-status", "running", timeout=60_000)
            expect(widget.locator('.agentcell-answer[data-slot="answer"]')).to_contain_text("word word word")
            (first_journal,) = (tmp_path / "journal").glob("*.jsonl")
            assert server.chat_requests[0].disconnected_at is None

            run_cell(page, "agentcell.show(")  # marimo re-runs the cell mid-stream
            deadline = time.monotonic() + 15
            while server.chat_requests[0].disconnected_at is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.chat_requests[0].outcome == "disconnected"
            deadline = time.monotonic() + 15  # the run journals its end just after its request closed
            while journal_status(tmp_path, first_journal.stem) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert journal_status(tmp_path, first_journal.stem) == "stopped"
            expect(widget).to_have_attribute("data-status", "running", timeout=30_000)  # the newer run's view
            deadline = time.monotonic() + 15
            while len(server.chat_requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert probe(page, "probe runs=1 views=1") == "probe runs=1 views=1"
            shot(page, "marimo-rerun-light.png")

            widget.locator(".agentcell-stop").click()  # Stop works in marimo too
            expect(widget).to_have_attribute("data-status", "stopped", timeout=10_000)
            assert probe(page, "probe runs=0 views=0") == "probe runs=0 views=0"
            assert server.chat_requests[1].outcome == "disconnected"
            assert len(server.chat_requests) == 2
            assert page.js_errors == []


def test_a_reopened_notebook_shows_the_finished_runs_transcript_light_and_dark(tmp_path: Path) -> None:
    write_notebook(tmp_path, prompt="Say hello to Zanzibar", model="offline")
    with marimo_edit(tmp_path) as base:
        with browser_page(tmp_path) as page:
            page.goto(base)
            run_all(page)
            show_cell = cell(page, "agentcell.show(")
            widget = show_cell.locator(".agentcell")
            expect(widget).to_have_attribute("data-status", "completed", timeout=60_000)
            saved = show_cell.locator("details.agentcell-saved")
            expect(saved).to_be_attached(timeout=15_000)  # appended under the view when the run ended
            expect(saved).to_contain_text("Zanzibar")
            shot(page, "marimo-run-light.png")
            assert page.js_errors == []
        with browser_page(tmp_path, dark=True) as page:  # a second view, late: it catches up with the run
            page.goto(base)
            widget = cell(page, "agentcell.show(").locator(".agentcell")
            expect(widget).to_have_attribute("data-status", "completed", timeout=30_000)
            expect(widget).to_contain_text("Zanzibar")
            # The live widget follows marimo's dark theme (it stayed a white card on the dark page before).
            expect(widget).to_have_attribute("data-host-theme", "dark")
            bg, fg = widget.evaluate("e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]")
            assert _luminance(bg) < 0.2 and _luminance(fg) > 0.6, (bg, fg)
            shot(page, "marimo-run-dark.png")
        session = tmp_path / "__marimo__" / "session" / "nb.py.json"
        deadline = time.monotonic() + 30
        while not (session.exists() and "agentcell-saved" in session.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "Zanzibar" in session.read_text()

    with marimo_edit(tmp_path) as base:  # reopened: nothing runs, marimo shows the saved session
        for dark in (False, True):
            with browser_page(tmp_path, dark=dark) as page:
                page.goto(base)
                saved = cell(page, "agentcell.show(").locator("details.agentcell-saved")
                expect(saved).to_be_attached(timeout=30_000)
                saved.locator("summary").first.click()
                static = saved.locator(".agentcell-static")
                expect(static).to_contain_text("It read your prompt: “Say hello to Zanzibar”")
                expect(static).to_have_attribute("data-status", "completed")
                shot(page, f"marimo-reopened-{'dark' if dark else 'light'}.png")
                assert page.js_errors == []
