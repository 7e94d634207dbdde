"""A run ready to start (`LaunchSpec`), and `start`: the one place a front end's run reaches the engine.

A `%%agent` cell builds its spec in `jupyter/cell.py`; `show()` builds one from its keywords. Both,
the terminal and the batch cell start their runs here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..options import ApproveCallback, RunOptions
from ..template.program import Template

if TYPE_CHECKING:
    from ..engine import Run


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchSpec:
    """Everything a run started from a cell needs: the compiled template, its run options, how to show it."""

    template: Template
    """The compiled cell."""
    options: RunOptions
    """What the engine is told (the context is the namespace snapshot plus `--context`)."""
    wait: bool = False
    """`--wait`: the cell blocks until the run ends."""
    quiet: bool = False
    """`--quiet`: no widget."""
    output: str | None = None
    """`-o NAME`: the variable the run handle is bound to."""
    key: str | None = None
    """The front end's cell id: re-running the same cell stops its previous run."""
    hint: str = ""
    """Shown under the widget (e.g. how to stop a `--wait` cell on an old ipykernel)."""
    record: str | None = None
    """`--record FILE`: the cassette the run's model responses are written to (`model` records into it)."""
    replay: str | None = None
    """`--replay FILE`: the cassette `model` answers from."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    hints: Literal["cell", "python"] = "cell"
    """Whose words budget hints use: a cell's flags (`--max-iter`) or Python's (`limits=UsageLimits`)."""


def start(spec: LaunchSpec, *, approve: ApproveCallback | None = None) -> Run:
    """Start the engine run a spec describes, on the running loop; returns the engine's `Run`.

    The one place a spec reaches the engine (background, `--wait` and terminal modes and `show()` all
    come through here); `approve` is the widget's Approve/Deny callback, if any, and takes the place
    of `spec.options.approve`.
    """
    from ..engine import start
    from ..options import HINT_STYLE

    options = spec.options if approve is None else replace(spec.options, approve=approve)
    token = HINT_STYLE.set(spec.hints)  # the run's task copies this context: its messages speak the front end's words
    try:
        return start(spec.template, options)
    finally:
        HINT_STYLE.reset(token)
