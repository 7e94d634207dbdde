"""Headless runners (nbclient, papermill, `jupyter nbconvert --execute`) save every run's transcript.

A plain background `%%agent` cell ends after its cell; its final output used to travel with the
finished cell's parent header, which headless runners drop, so saved notebooks kept an empty
placeholder. These tests execute notebooks the way each runner does and read the saved `.ipynb`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.kernel

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = "This answer comes from agentcell's offline model"


def _static(cell: Any) -> str:
    """The cell's saved static transcript (HTML), or "" if it has none."""
    for output in cell.get("outputs", []):
        html = output.get("data", {}).get("text/html", "")
        if "agentcell-static" in html:
            return str(html)
    return ""


def _status(html: str) -> str | None:
    found = re.search(r'class="agentcell-static" data-status="(\w+)"', html)
    return found.group(1) if found else None


@pytest.fixture
def offline_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for var in ("AGENTCELL_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    return tmp_path


def test_nbclient_saves_finished_and_still_running_background_runs(offline_env: Path) -> None:
    """With the headless wait switched off, runs go on in the background and are saved as they stand."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext agentcell\n%config AgentMagics.wait_when_headless = False"),
        nbformat.v4.new_code_cell("%%agent -m offline:fast\nSay hello to the class.\n[[answer]]"),
        nbformat.v4.new_code_cell("import asyncio\nawait asyncio.sleep(2)  # the run above ends during this cell"),
        nbformat.v4.new_code_cell("%%agent -m offline:slow\nExplain photosynthesis at length.\n[[answer]]"),
        nbformat.v4.new_code_cell("await asyncio.sleep(1)  # the notebook ends while that run streams"),
    ]
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    finished, running = _static(nb.cells[1]), _static(nb.cells[3])
    assert _status(finished) == "completed" and OFFLINE in finished
    assert "still running when this output was saved" not in finished
    # Saved as unfinished, with the words it had streamed.
    assert _status(running) == "running" and "still running when this output was saved" in running
    assert "offline" in running and "<p>" in running
    assert "agentcell" in nb.cells[1].outputs[-1].get("metadata", {})  # provenance once final


MARKDOWN_MODEL = """
import asyncio
from pydantic_ai.models.function import FunctionModel

async def _markdown_stream(messages, info):
    for piece in ["**Photo", "synthesis** ", "turns light ", "into sugar.", "\\n\\n- light", "\\n- water", "\\n"]:
        yield piece
        await asyncio.sleep(0.15)

markdown = FunctionModel(stream_function=_markdown_stream, model_name="markdown")
"""

WAITED = "so this cell waits for its run to finish"


def _execute(tool: str, nb: Any, path: Path) -> Any:
    """Execute `nb` the way `tool` does and return the saved notebook."""
    if tool == "nbclient":
        nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
        return nb
    src, out = path / "in.ipynb", path / f"out.{tool}.ipynb"
    nbformat.write(nb, src)
    if tool == "papermill":
        pytest.importorskip("papermill")
        cmd = [sys.executable, "-m", "papermill", "-k", "python3", str(src), str(out)]
    else:
        cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
               "--ExecutePreprocessor.kernel_name=python3", f"--output={out}", str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=240, cwd=path)
    return nbformat.read(out, as_version=4)


@pytest.mark.parametrize("tool", ["nbconvert", "nbclient", "papermill"])
def test_a_plain_cell_followed_by_a_sync_cell_saves_the_finished_answer(tool: str, offline_env: Path) -> None:
    """Run All with ordinary cells: the `time.sleep` after the run used to freeze it, and the notebook was
    saved with the run "running" and no answer. Headless, the plain cell now waits for its run."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext agentcell\n" + MARKDOWN_MODEL),
        nbformat.v4.new_code_cell("%%agent -m markdown\nExplain photosynthesis.\n[[answer]]"),
        nbformat.v4.new_code_cell("import time\ntime.sleep(3)"),
    ]
    saved = _execute(tool, nb, offline_env)
    html = _static(saved.cells[1])
    assert _status(html) == "completed"
    assert "<strong>Photosynthesis</strong>" in html and "<li>water</li>" in html  # the Markdown, rendered
    assert "still running when this output was saved" not in html
    said = [o for o in saved.cells[1].outputs if o.get("output_type") == "stream"]
    assert len(said) == 1 and WAITED in said[0]["text"]
    assert not [o for o in saved.cells[1].outputs if o.get("output_type") == "execute_result"]


def _run_quickstart(tool: str, out: Path) -> Any:
    src = ROOT / "notebooks" / "quickstart.ipynb"
    if tool == "papermill":
        pytest.importorskip("papermill")
        cmd = [sys.executable, "-m", "papermill", "--cwd", str(src.parent), "-k", "python3", str(src), str(out)]
    else:
        cmd = [sys.executable, "-m", "jupyter", "nbconvert", "--execute", "--to", "notebook",
               "--ExecutePreprocessor.kernel_name=python3", f"--output={out}", str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=240, cwd=src.parent)
    return nbformat.read(out, as_version=4)


@pytest.mark.parametrize("tool", ["papermill", "nbconvert"])
def test_quickstart_executed_headless_shows_every_answer_and_final_status(tool: str, offline_env: Path) -> None:
    nb = _run_quickstart(tool, offline_env / f"quickstart.{tool}.ipynb")
    agent_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%agent")]
    assert len(agent_cells) >= 2
    for cell in agent_cells:
        html = _static(cell)
        assert _status(html) in ("completed", "stopped"), cell.source.splitlines()[0]
        assert OFFLINE[:40] in html, cell.source.splitlines()[0]


def test_nbconvert_html_export_shows_the_answers(offline_env: Path) -> None:
    out = offline_env / "quickstart.html"
    src = ROOT / "notebooks" / "quickstart.ipynb"
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--execute", "--to", "html",
                    "--ExecutePreprocessor.kernel_name=python3", f"--output={out}", str(src)],
                   check=True, capture_output=True, timeout=240, cwd=src.parent)
    html = out.read_text()
    assert html.count('class="agentcell-static" data-status="completed"') >= 1
    assert "Cognition and Emotion, led by Dr Ada Byron" in html


def test_workshop_executed_by_papermill_saves_every_run(offline_env: Path) -> None:
    pytest.importorskip("papermill")
    src = ROOT / "notebooks" / "tool-calling-workshop.ipynb"
    out = offline_env / "workshop.ipynb"
    subprocess.run([sys.executable, "-m", "papermill", "--cwd", str(src.parent), "-k", "python3", str(src), str(out)],
                   check=True, capture_output=True, timeout=400, cwd=src.parent)
    nb = nbformat.read(out, as_version=4)
    agent_cells = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%agent")]
    assert len(agent_cells) >= 5
    for cell in agent_cells:
        html = _static(cell)
        assert 'class="ac-head"' in html, cell.source.splitlines()[0]  # a transcript, not the empty placeholder
        assert _status(html) in ("completed", "stopped", "halted", "budget_exhausted", "failed", "running")
