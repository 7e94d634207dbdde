"""`%agent export` right after a slow run's cell, under Run All (nbclient), waits for the run and then writes
the lesson: the export cell is a top-level `await` (`export_wait.py`), so the kernel keeps serving the run."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = pytest.mark.kernel

CELLS = [
    "%load_ext agentcell",
    "%%agent -o slow -m offline:fast --inject model=slow:15\nExplain photosynthesis in a sentence.\n[[answer]]",
    "%agent export slow lesson.html",
    "import os\nprint('status at export:', slow.status, '| written:', os.path.getsize('lesson.html') > 0)\n"
    "print('template in lesson:', 'Explain photosynthesis in a sentence.' in open('lesson.html').read())",
]


def test_export_under_run_all_waits_for_the_run_then_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCELL_MODEL", raising=False)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    texts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", f"{output.get('ename')}: {output.get('evalue')}"
            texts.append(output.get("text", ""))
    said = "".join(texts)
    size = (tmp_path / "lesson.html").stat().st_size
    assert "wrote lesson.html (" in said and f"{size / 1000:.1f} kB" in said
    assert "status at export: completed | written: True" in said
    assert "template in lesson: True" in said
