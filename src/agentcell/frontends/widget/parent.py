"""The running cell's parent header: where a widget's later output (a fork shown below its view) belongs.

ipykernel's display publisher sends each output under the parent header of the request being executed; a
fork started from a comm message is not a cell's execution, so the view keeps its cell's header and puts it
back for the output it shows then (`AgentWidget.in_cell`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def parent_header() -> Any:
    """The running cell's parent header (ipykernel's display publisher keeps it), or `None` outside a kernel."""
    from IPython import get_ipython

    publisher = getattr(get_ipython(), "display_pub", None)
    return getattr(publisher, "parent_header", None)


def under_parent(parent: Any, fn: Callable[[], Any]) -> Any:
    """`fn()` with the display publisher's parent header set to `parent` (then put back)."""
    from IPython import get_ipython

    publisher = getattr(get_ipython(), "display_pub", None)
    if parent is None or publisher is None or not hasattr(publisher, "parent_header"):
        return fn()
    before = publisher.parent_header
    publisher.parent_header = parent
    try:
        return fn()
    finally:
        publisher.parent_header = before
