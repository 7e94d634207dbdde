"""A batch or a comparison over rows as a cell's value (`batch = agentcell.map(...)`, then `batch`): IPython shows its
live view (the magic's widgets), not the one-line repr, once `%load_ext agentcell` ran or `agentcell` was imported in
a notebook kernel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import agentcell
from agentcell.batch import compare, map

from .test_models_scores import TEMPLATE, ip

pytestmark = pytest.mark.anyio
__all__ = ["ip"]  # the shell fixture, shared


class _Kernel:
    """What makes a shell a kernel's, to `batch_display.register`: its `kernel`."""


@pytest.fixture
def kernel_ip(ip: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The test shell as a notebook kernel's, agentcell loaded there (a terminal IPython registers no view); the
    process's one shell, as a kernel's is (`display()` shows through that one, whichever test made one before)."""
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setattr(ip, "kernel", _Kernel(), raising=False)
    monkeypatch.setattr(InteractiveShell, "_instance", ip)
    agentcell.load_ipython_extension(ip)  # what `%load_ext agentcell` runs (idempotent): now in a kernel
    return ip


def test_a_terminal_ipython_keeps_the_repr(ip: Any) -> None:
    from agentcell.batch import Batch

    with pytest.raises(KeyError):  # `%load_ext agentcell` ran, but no widget renders here
        ip.display_formatter.ipython_display_formatter.lookup_by_type(Batch)


async def test_a_batch_as_a_cells_value_shows_its_live_widget(kernel_ip: Any,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from agentcell.frontends.widget.batch_view import BatchWidget

    kernel_ip.user_ns["map"] = map
    kernel_ip.run_cell(f"batch = map({TEMPLATE!r}, qs, model=a, expect={{'answer': 'gold'}}, journal=False)\nbatch")
    batch = kernel_ip.user_ns["batch"]
    assert isinstance(batch.view, BatchWidget)  # the display hook made it; before, only the repr was printed
    shown = capsys.readouterr().out
    assert "<BatchWidget status='running' rows=30>" in shown and "<agentcell batch of 30 rows" not in shown
    assert "\nagentcell batch: 30 rows (30 pending); running (so far)" in shown  # the static twin a save keeps
    await batch.task  # the view's done callback came first
    assert batch.view.final["summary"]["line"].startswith("20/30 passed (66.7%)")


async def test_a_comparison_over_rows_as_a_cells_value_shows_the_models_table(kernel_ip: Any) -> None:
    from agentcell.frontends.widget.batch_view import BatchWidget
    from agentcell.frontends.widget.models_view import ModelsWidget

    kernel_ip.user_ns["compare"] = compare
    kernel_ip.run_cell(f"compare({TEMPLATE!r}, models=[a, b], over=qs, expect={{'answer': 'gold'}}, journal=False)")
    compared = kernel_ip.user_ns["_"]
    assert isinstance(compared.view, ModelsWidget)
    assert all(isinstance(b.view, BatchWidget) for b in compared.batches.values())
    await compared
    await asyncio.gather(*(b.task for b in compared.batches.values()))
    assert [cells[1] for cells in compared.view.state["selection"]["body"]] == ["20/30 (66.7%)", "24/30 (80.0%)"]


async def test_map_with_models_as_a_cells_value_shows_the_same_views(kernel_ip: Any) -> None:
    from agentcell.frontends.widget.models_view import ModelsWidget

    kernel_ip.user_ns["map"] = map
    kernel_ip.run_cell(f"map({TEMPLATE!r}, qs, models=[a, b], journal=False)")
    compared = kernel_ip.user_ns["_"]
    assert isinstance(compared.view, ModelsWidget)  # unscored too: the table is each model's rows side by side
    await compared


def test_importing_agentcell_in_a_kernel_registers_the_views(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    from agentcell.batch import Batch, ComparedBatch
    from agentcell.frontends.jupyter.batch_display import show_batch, show_compared

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    formatter = shell.display_formatter.ipython_display_formatter
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    agentcell._show_batches_in_notebooks()  # what `import agentcell` runs
    with pytest.raises(KeyError):  # not a kernel (a terminal IPython): the repr stays
        formatter.lookup_by_type(Batch)
    monkeypatch.setattr(shell, "kernel", _Kernel(), raising=False)
    pytest.importorskip("ipykernel")  # a kernel has imported it
    agentcell._show_batches_in_notebooks()
    assert formatter.lookup_by_type(Batch) is show_batch
    assert formatter.lookup_by_type(ComparedBatch) is show_compared
