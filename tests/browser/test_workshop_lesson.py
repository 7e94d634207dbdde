"""The workshop's own runs, exported as a lesson, open in Chromium with no network request.

The workshop notebook (a copy, with its cassettes, in a temporary folder) is executed headlessly by
nbclient on the offline model — exactly as a learner's "Run all" — and its section 9 writes
`workshop-lesson.html` with `%agent export`. That file is then opened from disk in Chromium: every
run is there with its teaching view (lanes, markers, concurrency bars), and the only request the page
makes is for the document itself.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, settled, sync_api

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = [pytest.mark.browser, pytest.mark.kernel]
expect = sync_api.expect
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
RUNS = ("trip", "rooms", "errors", "cached", "bounded", "looped", "replayed", "stepped", "broken")


def _execute_workshop(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(NOTEBOOKS / "tool-calling-workshop.ipynb", folder)
    shutil.copytree(NOTEBOOKS / "cassettes", folder / "cassettes")
    for var in ("AGENTCELL_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(folder / "journal"))
    nb = nbformat.read(folder / "tool-calling-workshop.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    export = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("%agent export"))
    assert export.source.split()[2:-1] == list(RUNS)  # the runs this test looks for are the ones exported
    return folder / "workshop-lesson.html"


def test_the_workshop_lesson_opens_with_no_network(page: Any, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    lesson = _execute_workshop(tmp_path, monkeypatch)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(lesson.as_uri())
    expect(page.get_by_role("heading", name=re.compile("^agentcell lesson"))).to_be_visible()
    for name in RUNS:
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
    # What each section of the workshop teaches is in the file: the concurrency of section 3, the error
    # fed back of section 4, the forced final round of section 6 and the nudge of section 7.
    expect(page.get_by_role("img", name=re.compile("^room_for ran from .* at the same time as room_for$")).first
           ).to_be_attached()
    expect(page.get_by_text("error fed back — the model reads:").first).to_be_attached()
    expect(page.get_by_role("note", name="agentcell: final round: answer now").first).to_be_attached()
    expect(page.get_by_role("note", name="agentcell: loop-detection nudge").first).to_be_attached()
    # Lesson mode: the contents, each run's cell, the guess of "Step through it", the faults of "Break it".
    expect(page.get_by_role("navigation", name="contents").get_by_role("link")).to_have_count(len(RUNS))
    expect(page.get_by_text("%%agent -o stepped -t lookup_module -m offline:fast --step --predict")).to_be_visible()
    expect(page.get_by_role("heading", name="Predictions (1 of 1 right)")).to_be_visible()
    expect(page.get_by_role("img", name=re.compile(r"^back-off after 429 \(injected\): .*, injected$"))).to_be_attached()
    settled(page)
    assert requests == [lesson.as_uri()]  # the document itself, nothing else
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "workshop-lesson.png"), full_page=False)
