"""Is a person watching? Whether a live front end shows this kernel's runs, or a headless runner executes it.

A background `%%agent` run only advances while the kernel's loop is free: a headless runner (nbclient,
papermill, `jupyter nbconvert --execute`) goes on to the next cell at once, a synchronous next cell
(`time.sleep`, a pandas job) freezes the run, and the notebook is saved with the run unfinished. So
when nobody is watching, a plain `%%agent` cell waits for its run as `--wait` does (`blocking.py`);
when a person is, the cell returns at once as before. The notebooks' demos ask the same question
(`agentcell.headless()`) to decide whether to press their own buttons.

A front end is **live** when any of these holds (each one is sent or left only by a front end that
shows cell outputs to a person as they arrive):

* the executing request names its cell (`metadata.cellId` of the Jupyter execute request):
  JupyterLab, Notebook 7 and VS Code send it; nbclient (and so papermill and nbconvert) and the
  console clients do not;
* VS Code's Jupyter extension has set `__vsc_ipynb_file__` in the namespace;
* a view of an agentcell widget has talked to this kernel (`widget/viewers.py`): a front end renders
  our widgets, whatever its execute requests carry.

Outside a kernel (terminal IPython, plain Python, marimo) nothing is headless: those front ends run
the run in the cell or have their own loop. `AGENTCELL_HEADLESS=1` / `=0` overrides the detection
(a front end this does not know, or a test).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from ..widget.viewers import view_seen
from .notebook import current_parent

ENV = "AGENTCELL_HEADLESS"
"""`1` forces headless, `0` forces live; unset (or anything else) lets the kernel decide."""

VSCODE_MARKER = "__vsc_ipynb_file__"
"""The variable VS Code's Jupyter extension sets in every notebook kernel it starts."""

WAITED = (
    "agentcell: no live notebook view is attached (a headless run: nbclient, papermill, "
    "nbconvert --execute), so this cell waits for its run to finish, as --wait does."
)
"""What a plain `%%agent` cell prints when it waited because nobody is watching."""

ASKING = (
    "agentcell: the run is waiting for an approval that nobody here can give, so the cell stopped waiting; "
    "the run waits in the background (cancel it as Stop does, or answer it where the widget is live)."
)
"""What it prints when its run paused for an approval instead of ending."""


def headless(shell: Any = None) -> bool:
    """Whether this cell runs in a Jupyter kernel that no person is watching live.

    True under nbclient, papermill and `jupyter nbconvert --execute` (and a console client, which
    renders no widget); False in JupyterLab, Notebook 7 and VS Code, in any front end that has
    rendered an agentcell view, and outside a kernel. Cheap: reads the executing request only.
    """
    forced = os.environ.get(ENV, "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    if shell is None:
        if "IPython" not in sys.modules:
            return False
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return False  # terminal IPython or plain Python: the run happens in the cell anyway
    return not _live(shell)


def _live(shell: Any) -> bool:
    if view_seen():
        return True
    user_ns = getattr(shell, "user_ns", None) or {}
    if VSCODE_MARKER in user_ns:
        return True
    parent = current_parent(shell)
    metadata = parent.get("metadata") if parent is not None else None
    return isinstance(metadata, dict) and bool(metadata.get("cellId"))


async def until_ended_or_asking(handle: Any) -> bool:
    """Wait for the run's end, or until it asks a person for an approval: headless, nobody can answer,
    so the cell returns and the run waits in the background (a later cell may cancel it, as Stop does)."""
    loop = asyncio.get_running_loop()
    asking: asyncio.Future[None] = loop.create_future()

    def on_event(event: Any) -> None:
        if getattr(event, "kind", None) == "approval_requested" and not asking.done():
            asking.set_result(None)

    handle.watch(on_event)
    ended = asyncio.ensure_future(handle.run.wait())
    try:
        await asyncio.wait([ended, asking], return_when=asyncio.FIRST_COMPLETED)
    finally:
        asked = not ended.done()
        asking.cancel()
        ended.cancel()  # only the waiter: `Run.wait` shields the run itself
    if asked:
        return True
    if handle.task is not None:
        await asyncio.shield(handle.task)  # the widget has shown the end too
    return False
