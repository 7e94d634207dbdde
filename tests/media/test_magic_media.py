"""`%%agent` with a figure and a DataFrame in the cell, and `--describe-media`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.run_cell(
        "import pandas as pd\n"
        "from PIL import Image\n"
        "df = pd.DataFrame({'x': range(300), 'y': range(300)})\n"
        "photo = Image.new('RGB', (64, 48))\n"
    )
    yield shell
    shell.run_line_magic("agent", "stop")


def test_a_cell_hands_over_a_picture_and_a_table(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o r", "What is in {{ photo }} and\n{{ df }}\n[[answer]]")
    result: Any = ip.user_ns["r"]
    assert result.status == "completed"
    assert "I was given a 64×48 PNG and a table of 300 rows × 2 columns (showing 20)." in result.answer


def test_describe_media_flag_reaches_the_run(ip: InteractiveShell) -> None:
    spec = ip.magics_manager.registry["AgentMagics"].prepare("--describe-media offline:fast", "Hi [[answer]]")
    assert spec.options.describe_media == "offline:fast"
