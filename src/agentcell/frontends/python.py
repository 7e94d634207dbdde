"""Plain Python (a script inside `asyncio.run`, terminal IPython with a running loop): the fallback front end.

A call here has a place of its own: the run replaces nothing, and only `show(key=its_widget)` replaces
it. Nothing is displayed (the caller holds the view) and nothing is saved.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from .base import Place

if TYPE_CHECKING:
    from .registry import LiveRun
    from .widget.widget import AgentWidget


class PlainPython:
    """The front end of code that runs in no notebook."""

    name = "python"

    def here(self) -> Place:
        """Always here (the last front end asked): a place of its own."""
        return Place(front=self.name, key=f"run:{uuid.uuid4().hex}")

    def display(self, view: AgentWidget) -> None:
        """Nothing to show it in: the caller holds the view."""

    def keep(self, run: LiveRun, view: AgentWidget, place: Place) -> None:
        """Nothing is saved."""


PYTHON = PlainPython()
