"""Help where people look: `%agent`, `%agent help`, `%agent?` and `%%agent?` in a plain InteractiveShell."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.frontends.jupyter.help import SUBCOMMANDS


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.delenv("AGENTCELL_MODEL", raising=False)
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    yield shell
    shell.run_line_magic("unload_ext", "agentcell")


@pytest.mark.parametrize("line", ["", "help"])
def test_agent_alone_and_agent_help_list_every_subcommand_with_one_line(ip: InteractiveShell, line: str,
                                                                         capsys: Any) -> None:
    assert ip.run_line_magic("agent", line) is None  # printed, not a raw dict as the cell's value
    out = capsys.readouterr().out
    for name, usage, summary in SUBCOMMANDS:
        row = next(r for r in out.splitlines() if r.strip().startswith(usage))
        assert row.rstrip().endswith(summary), name
    assert "%%agent [options]" in out
    assert "The next %%agent cell without -m uses: offline (default)." in out


def test_line_magic_help_is_the_listing(ip: InteractiveShell) -> None:
    doc = ip.find_line_magic("agent").__doc__
    assert all(usage in doc for _, usage, _ in SUBCOMMANDS)
    assert "%agent journal [list] | clean [all | DAYS]" in doc


def test_cell_magic_usage_line_names_the_cell_magic(ip: InteractiveShell) -> None:
    doc = ip.find_cell_magic("agent").__doc__
    usage = doc.split("::", 1)[1].strip().splitlines()[0]
    assert usage.startswith("%%agent [-m MODEL]")
