"""A fork's view offers "Compare with the original": `agentcell.diff(original, fork)` inside the fork's output.

The diff is computed here, in the kernel, by `render/diff.py` (its one owner: the HTML table a notebook
shows for `diff(a, b)` and the text a terminal shows), and reaches the browser as the widget's
`comparison` trait, never recomputed in JavaScript. A trait rather than a custom message because it is
set once, and a trait is what a re-opened view and the saved widget state read back. The fork's static
twin (the output a saved notebook shows where no widget renders) is updated with the same table, so a
notebook saved after the comparison was opened shows it too.

Why inside the fork's output and not a plain output below it: the control is on the fork's view, and a
person expects what it opens to appear there, next to it (it also toggles); an output appended to the
cell would land below every later fork of the same run, far from the control that opened it.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import AgentcellError
from ..result import RunResult
from .widget.widget import AgentWidget


class Fork(Protocol):
    """What is compared: a fork started with a view (a `RunHandle`)."""

    run_id: str
    widget: AgentWidget | None

    def result(self) -> RunResult: ...

OFFER_KEY = "original"
"""`comparison["original"]`: the original run's id; set as soon as the fork is shown (the view offers the control
once the fork has ended)."""


def offer_comparison(fork: Fork, original: RunResult) -> None:
    """Let the fork's view offer "Compare with the original" (its `compare` message computes the diff)."""
    widget = fork.widget
    if widget is None:
        return
    widget.comparison = {OFFER_KEY: original.run_id}
    widget.on_compare = lambda: compare_in_view(fork, original)


def compare_in_view(fork: Fork, original: RunResult) -> None:
    """The view's `compare` message: put `diff(original, fork)` in the view and in its saved output.

    Asked again, it sends nothing new (the view toggles what it has). A fork still going is said in the view
    as one sentence (the control is only offered once it ended; a stale view may still ask).
    """
    from ..render.diff import diff, diff_text

    widget = fork.widget
    assert widget is not None
    if "html" in widget.comparison:
        return
    try:
        got = diff(original, fork.result())
    except (RuntimeError, TypeError, AgentcellError) as exc:
        widget.note(f"could not compare with the original: {exc}", run_id=fork.run_id)
        return
    first = got["first_difference"]
    widget.comparison = {
        OFFER_KEY: original.run_id,
        "html": got._repr_html_(),
        "text": diff_text(got),
        "summary": _summary(first),
    }
    widget.refresh_output()


def _summary(first: dict[str, Any] | None) -> str:
    """The one sentence the view announces when the comparison opens."""
    if first is None:
        return "compared with the original: no round differs"
    return f"compared with the original: first difference in {first['slot']}, round {first['round']}, {first['part']}"
