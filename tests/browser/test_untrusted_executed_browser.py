"""The executed quickstart opened in JupyterLab as `scripts/quickstart` suggests: untrusted (nobody signed
it), so JupyterLab strips every `<style>` and renders no widget view. It must still read well: no stray
placeholder where the live view would be, and the saved transcript as plain readable markup — no slot
label shouting as a heading. A screenshot is kept in `test-artifacts/quickstart-untrusted.png`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser.lab import Lab, open_notebook, screenshot, sync_api

pytestmark = pytest.mark.browser
expect = sync_api.expect

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "quickstart.ipynb"


def test_the_executed_quickstart_reads_well_untrusted(lab: Lab, page: Any, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    nbclient = pytest.importorskip("nbclient")
    for var in ("AGENTCELL_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    nb = nbformat.read(QUICKSTART, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(QUICKSTART.parent)}}).execute()
    nbformat.write(nb, lab.root / "quickstart.executed.ipynb")  # unsigned: JupyterLab treats it as untrusted

    open_notebook(page, lab, "quickstart.executed.ipynb")
    static = page.locator(".agentcell-static")
    expect(static.first).to_contain_text("Cognition and Emotion, led by Dr Ada Byron", timeout=30_000)
    assert page.locator("style", has_text="agentcell-static").count() == 0, "the notebook was trusted after all"
    text = page.locator(".jp-Notebook").inner_text()
    assert "[agentcell live view]" not in text
    assert "Loading widget" not in text
    # Unstyled, a slot's label reads as a line of text: no heading outside the folded teaching view.
    assert static.locator("h1, h2, h3").count() == 0
    expect(static.first.locator("p.ac-slot-name strong").first).to_have_text("answer")
    static.first.scroll_into_view_if_needed()
    screenshot(page, "quickstart-untrusted.png")
    print(f"screenshot: test-artifacts/quickstart-untrusted.png ({sys.platform})")
