"""Bounds on one slot's render: how much text it may produce, how long it may take, and Stop.

The engine renders a slot's prompt in a worker thread (so the kernel's loop, and Stop, stay live);
these bounds make that render end: the text is produced piece by piece (`jinja2.Template.generate`)
and each piece is counted against `RENDER_CHARS`, the clock against `RENDER_SECONDS`, and the
engine's cancel flag (set on Stop, or when it gave up waiting) is checked. A single expression that
runs long (`{{ lipsum(10**6) }}`) is only noticed when it returns; by then the engine has stopped
waiting for it (`RENDER_SECONDS`, then `TemplateRenderError`) and the thread's result is dropped.
"""

from __future__ import annotations

import threading
import time
from contextvars import ContextVar, Token
from dataclasses import dataclass, field

RENDER_CHARS = 2_000_000
"""Most characters one slot's render may produce (system text, turns and option values together)."""
RENDER_SECONDS = 10.0
"""Longest one slot's render may take."""

cancel_flag: ContextVar[threading.Event | None] = ContextVar("agentcell_render_cancel", default=None)
"""Set by whoever renders in a thread; once the event is set, the render stops at its next piece."""


class RenderLimit(Exception):
    """A render went past a bound (or was cancelled); the renderer turns it into `TemplateRenderError`."""


@dataclass(slots=True)
class RenderBudget:
    """What is left of one slot render's bounds."""

    chars: int = RENDER_CHARS
    deadline: float = field(default_factory=lambda: time.monotonic() + RENDER_SECONDS)
    cancel: threading.Event | None = None

    def take(self, size: int) -> None:
        """Count `size` more characters; raise `RenderLimit` past a bound or once cancelled."""
        self.chars -= size
        if self.cancel is not None and self.cancel.is_set():
            raise RenderLimit("the render was stopped")
        if self.chars < 0:
            raise RenderLimit(
                f"the prompt grew past {RENDER_CHARS:,} characters; render less (a loop over too much, a huge value?)"
            )
        if time.monotonic() > self.deadline:
            raise RenderLimit(
                f"rendering took longer than {RENDER_SECONDS:g} s; render less or simplify the expressions"
            )


_current: ContextVar[RenderBudget | None] = ContextVar("agentcell_render_budget", default=None)


class render_budget:  # lower case: used as a function, `with render_budget() as budget:`
    """A fresh budget for one slot's render, current until the block ends (a class, not `@contextmanager`:
    entered once per slot render, where a generator's costs several calls more)."""

    __slots__ = ("_budget", "_token")

    def __init__(self) -> None:
        self._budget = RenderBudget(cancel=cancel_flag.get())
        self._token: Token[RenderBudget | None] | None = None

    def __enter__(self) -> RenderBudget:
        self._token = _current.set(self._budget)
        return self._budget

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _current.reset(self._token)


def current_budget() -> RenderBudget | None:
    """The budget of the render in progress, if any."""
    return _current.get()
