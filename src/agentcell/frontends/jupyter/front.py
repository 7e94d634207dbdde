"""Jupyter (JupyterLab, Notebook 7, VS Code, nbclient): a run belongs to the executing cell.

The front end sends the cell's id with each execute request; a newer run from the same cell replaces
the older. A view is shown as two outputs (the live widget and its static twin, `AgentWidget.show`),
and the twin is published again at cell boundaries until it holds the final transcript
(`widget/saved_outputs.py`), so a saved notebook keeps every run, headless runners included.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..base import Place
from .notebook import current_parent

if TYPE_CHECKING:
    from ..registry import LiveRun
    from ..widget.widget import AgentWidget


class Jupyter:
    """The front end of a Jupyter kernel whose client sends cell ids."""

    name = "jupyter"

    def here(self) -> Place | None:
        """The executing cell, or `None` (no kernel, or the client sent no cell id)."""
        execution = jupyter_execution()
        if execution is None:
            return None
        cell_id, parent = execution
        return Place(front=self.name, key=f"cell:{cell_id}", generation=parent)

    def display(self, view: AgentWidget) -> None:
        """The live view and its static twin, as the cell's outputs."""
        view.show()

    def keep(self, run: LiveRun, view: AgentWidget, place: Place) -> None:
        """Nothing more: a shown view is republished at cell boundaries (`AgentWidget.show`)."""


JUPYTER = Jupyter()


def jupyter_execution() -> tuple[str, object] | None:
    """The executing Jupyter cell's id and its request, or `None` (no kernel, or the front end sent no id)."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    parent = current_parent(get_ipython())
    cell_id = parent.get("metadata", {}).get("cellId") if parent is not None else None
    return (str(cell_id), parent) if cell_id else None
