"""What a front end is: where a call comes from, how it shows a run, and how its output survives saving.

A front end is where agentcell's code runs: a Jupyter kernel, a marimo notebook, plain Python. Each
is one `FrontEnd` implementation (`jupyter/front.py`, `marimo.py`, `python.py`); `show.py` asks them
in order which one runs the call (`FRONT_ENDS`), so a new front end is a new implementation listed
there, and nothing else changes.

*Where a call comes from* decides which earlier run a new one replaces (a `Place`): marimo re-runs a
cell on every upstream change, a Jupyter cell is re-run by hand, and in plain Python a run replaces
nothing unless `show(key=...)` says so. One execution of a cell may start several runs: they share a
*generation* and coexist; the next execution replaces them all (`RunRegistry.add`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .registry import LiveRun
    from .widget.widget import AgentWidget


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """Where a call comes from."""

    front: str
    """The name of the front end running the code (`FrontEnd.name`)."""
    key: str
    """The registry place: a newer run from the same place replaces the older."""
    generation: object = None
    """This execution of the cell (runs of one execution coexist); `None`: always replace."""
    cell: str | None = None
    """The front end's own id of the cell the call was made in, when it needs one to keep the output."""


class FrontEnd(Protocol):
    """One place runs are started from and shown in."""

    @property
    def name(self) -> str:
        """A short name (`Place.front`)."""
        ...

    def here(self) -> Place | None:
        """The place of a call made now, if this front end is running it; `None` otherwise."""
        ...

    def display(self, view: AgentWidget) -> None:
        """Show a run's live view where the call was made (the caller does not return it)."""
        ...

    def keep(self, run: LiveRun, view: AgentWidget, place: Place) -> None:
        """Make the run's output survive saving the notebook; called once, as the run starts from `place`."""
        ...
