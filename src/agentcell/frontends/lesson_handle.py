"""Lesson mode on a run's handle: stepping (`step=True`), guesses, and the cell a lesson shows.

A mixin of `RunHandle` (`handle.py`): these are the handle's public `step()`, `go()`, `predict()`, `paused`
and `show_source()`, kept apart from its reading and control so each module has one job.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..engine.lesson import LessonControls, Pause
from ..errors import AgentcellError
from ..loops import wait_on
from ..render.cell_source import CellSource, remember

if TYPE_CHECKING:
    from ..engine import Run
    from .widget.widget import AgentWidget


class LessonHandle:
    """The lesson-mode half of `RunHandle` (which sets `run`, `run_id`, `widget` and `loop`)."""

    run: Run
    run_id: str
    widget: AgentWidget | None
    loop: asyncio.AbstractEventLoop

    source: CellSource | None = None
    """The template, flags and `{{ }}` values that produced the run (masked), for the teaching view and the lesson."""

    def show_source(self, source: CellSource) -> None:
        """Say what produced the run: kept here, on the widget (its teaching view) and by run id (the lesson)."""
        self.source = source
        remember(self.run_id, source)
        if self.widget is not None:
            self.widget.source = source.as_json()

    @property
    def paused(self) -> Pause | None:
        """What the stepped run waits before now (`str()` says it: "paused before request 2: …"), else `None`."""
        lesson = self.run.lesson
        return None if lesson is None else lesson.paused

    async def step(self) -> Pause | None:
        """Let a stepped run go on to its next pause and return that pause (`None`: the run ended first).

        Safe to call before the run reached its first pause: that pause then passes (each call is one step).
        Raises `AgentcellError` for a run started without `step=True`."""
        lesson = self._lesson("step()")
        return await wait_on(self.loop, lesson.step, what="this run")

    def go(self) -> None:
        """Stop pausing: the stepped run goes on to its end (Stop and budgets work as ever)."""
        self._lesson("go()").go()

    def predict(self, does: str, tool: str | None = None) -> None:
        """Guess what the model does at this pause before a request, or else at the next one: `answer`, `tool`
        (which) or `both`. The reveal is kept in `RunResult.predictions` (and the widget and the lesson show it)."""
        self._lesson("predict()").predict(does, tool)

    def lesson_message(self, content: Mapping[str, Any]) -> None:
        """The widget's Next / Run to end / prediction (on the run's loop); odd input is ignored."""
        lesson = self.run.lesson
        if lesson is None:
            return
        match content.get("kind"):
            case "step":
                lesson.step()
            case "go":
                lesson.go()
            case "predict" if content.get("does") in ("answer", "tool", "both"):
                tool = content.get("tool")
                lesson.predict(str(content["does"]), tool if isinstance(tool, str) and tool else None)

    def _lesson(self, what: str) -> LessonControls:
        lesson = self.run.lesson
        if lesson is None:
            raise AgentcellError(f"{what} needs a run started with step=True (%%agent --step)")
        return lesson
