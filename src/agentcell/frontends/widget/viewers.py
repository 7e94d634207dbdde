"""Whether a view of any agentcell widget has ever talked to this kernel.

A rendered view sends something back (a snapshot request when it opens, Stop, Approve): proof that a
live front end shows this kernel's widgets, whatever it sends with its execute requests. Headless
runners (nbclient, papermill, `nbconvert --execute`) render nothing, so they never set it. Read by
`frontends/jupyter/audience.py`.
"""

from __future__ import annotations

_seen = False


def note_view() -> None:
    """A view sent a message: a live front end is rendering this kernel's widgets."""
    global _seen
    _seen = True


def view_seen() -> bool:
    """Whether any view has sent a message since the kernel started."""
    return _seen
