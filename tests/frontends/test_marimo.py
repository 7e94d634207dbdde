"""marimo without a browser: `marimo export html` keeps the static transcript, `python nb.py` says what to do.

`marimo export html` runs the notebook once and exports as soon as the last cell has finished, so the
README's idiom for an exported notebook waits for the run (`await complete_async(...)`) and shows
`static_transcript(result)`. The browser side (live view, re-run, reopened session) is in
`tests/browser/test_marimo_browser.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentcell.render.output import StaticTranscript, static_transcript
from agentcell.transcript import Transcript

mo = pytest.importorskip("marimo")

SRC = Path(__file__).resolve().parents[2] / "src"

EXPORTED = '''import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import agentcell
    return (agentcell,)


@app.cell
async def _(agentcell):
    result = await agentcell.complete_async("Say hello to Zanzibar [[answer]]", model="offline:fast")
    agentcell.static_transcript(result)
    return (result,)


if __name__ == "__main__":
    app.run()
'''

SHOWN = '''import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    import agentcell
    view = agentcell.show("Say hello [[answer]]", model="offline:fast")
    view
    return


if __name__ == "__main__":
    app.run()
'''


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENTCELL_JOURNAL": str(tmp_path / "journal")}


@pytest.mark.slow  # a marimo subprocess
def test_marimo_export_html_keeps_the_static_transcript(tmp_path: Path) -> None:
    (tmp_path / "nb.py").write_text(EXPORTED)
    done = subprocess.run([sys.executable, "-m", "marimo", "export", "html", "nb.py", "-o", "out.html", "--no-sandbox"],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    html = (tmp_path / "out.html").read_text()
    assert "agentcell-static" in html and "data-alone" in html
    assert "It read your prompt: “Say hello to Zanzibar”" in html.replace("\\u201c", "“").replace("\\u201d", "”")


@pytest.mark.slow  # a python subprocess that imports marimo
def test_a_marimo_notebook_run_as_a_script_says_what_to_do_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "nb.py").write_text(SHOWN)
    done = subprocess.run([sys.executable, "nb.py"], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(
        "agentcell.errors.NoEventLoop: show() needs a running event loop")
    assert "no running event loop" not in done.stderr and "asyncio" not in done.stderr


def test_marimo_shows_a_static_transcript_as_its_html() -> None:
    saved = static_transcript(Transcript())
    assert isinstance(saved, StaticTranscript)
    assert mo.as_html(saved).text == saved.html
    assert 'class="agentcell-static"' in saved.html and "data-alone" in saved.html
