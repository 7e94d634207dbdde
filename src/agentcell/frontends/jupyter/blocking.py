"""`%%agent --wait` as a top-level `await`, and the opt-in Kernel → Interrupt hook.

A cell magic cannot be awaited, so an input transformer rewrites a `%%agent … --wait` cell into
`await <AgentMagics>.agent_wait(line, cell)` before IPython looks for magics. IPython then runs the
cell as a coroutine on the kernel's loop: Run All, nbclient and papermill wait for the run; the
Stop button reaches Python there on ipykernel >= 7.4 (comms dispatched while a cell awaits), and
Kernel → Interrupt cancels the awaiting cell — and through it the run — on every version.

The interrupt hook uses ipykernel's `saved_sigint_handler` (restored after every shell message, so
it is the handler in force while the kernel is idle): with it, Interrupt also stops background runs.
"""

from __future__ import annotations

import re
import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..registry import RunRegistry

_WAIT_CELL = re.compile(r"^%%agent\b(?P<line>[^\n]*)\n?", re.ASCII)
_WAIT_FLAG = re.compile(r"(?:^|\s)--wait(?:\s|$)")
_NO_WAIT_FLAG = re.compile(r"(?:^|\s)--no-wait(?:\s|$)")
_STEP_FLAG = re.compile(r"(?:^|\s)--(?:step|predict)(?:\s|$)")
"""A stepped run waits for Next (a later cell's `handle.step()` headless): its cell must not wait for its end."""


def wait_transformer(lines: list[str]) -> list[str]:
    """Rewrite a `%%agent … --wait` cell into a top-level await; leave every other cell alone.

    A plain `%%agent` cell is rewritten too when nobody is watching (`audience.headless`: nbclient,
    papermill, `nbconvert --execute`), unless it says `--no-wait` or `AgentMagics.wait_when_headless`
    is off: its run then finishes in its own cell, and the saved notebook holds the whole transcript.
    """
    if not lines:
        return lines
    match = _WAIT_CELL.match(lines[0])
    if match is None:
        return lines
    line = match.group("line").strip()
    cell = "".join(lines[1:])
    call = f"get_ipython().magics_manager.registry['AgentMagics'].agent_wait({line!r}, {cell!r}"
    if _WAIT_FLAG.search(match.group("line")) is not None:
        return [f"await {call})\n"]
    if _NO_WAIT_FLAG.search(match.group("line")) is None and _STEP_FLAG.search(line) is None and _waits_headless():
        return [f"await {call}, headless=True)\n"]
    return lines


def _waits_headless() -> bool:
    from IPython import get_ipython

    from .audience import headless

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    return bool(magics is not None and getattr(magics, "wait_when_headless", False) and headless(shell))


def install_transformer(ipython: Any) -> None:
    """Add the transformer once (before IPython's own cell-magic handling)."""
    cleanup = ipython.input_transformers_cleanup
    if wait_transformer not in cleanup:
        cleanup.append(wait_transformer)


def remove_transformer(ipython: Any) -> None:
    cleanup = ipython.input_transformers_cleanup
    while wait_transformer in cleanup:
        cleanup.remove(wait_transformer)


def install_interrupt_hook(ipython: Any, registry: RunRegistry, *, enabled: bool) -> bool:
    """Make Kernel → Interrupt stop background runs while the kernel is idle (ipykernel only).

    Returns whether a hook is now installed. Outside ipykernel (terminal IPython) Ctrl-C already
    stops the run running in the cell, so nothing is installed.
    """
    kernel = getattr(ipython, "kernel", None)
    if kernel is None or not hasattr(kernel, "saved_sigint_handler"):
        return False
    if not enabled:
        kernel.saved_sigint_handler = signal.SIG_IGN
        return False

    def on_interrupt(signum: int, frame: Any) -> None:
        # A Python signal handler runs between bytecodes while the loop may sit in select():
        # call_soon_threadsafe writes to the loop's self-pipe, so the cancel happens at once.
        for handle in list(registry.runs.values()):
            if not handle.done:
                handle.loop.call_soon_threadsafe(handle.cancel)

    kernel.saved_sigint_handler = on_interrupt
    return True
