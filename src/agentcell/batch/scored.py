"""When a batch's finished rows are scored (`scoring.Scorer` says how): at once, or in a task of their own.

With synchronous evaluators only (plain functions, the default check) a row is scored in the step its run
ended, before it is shown or written: no task, no loop turn. An `async def` evaluator or a pydantic-evals
`Evaluator` gets the row a task: the batch starts its next row at once, the row is shown again and counts
as finished (`async for`) once scored, and the batch ends once the last task has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from .results import RowResult
from .resume import DONE
from .scoring import Score, Scorer


class Scoring:
    """A batch's scoring of its finished rows; `show` sets a row (its watchers see it), `finished` counts it."""

    def __init__(self, scorer: Scorer, loop: asyncio.AbstractEventLoop, show: Callable[[RowResult], None],
                 finished: Callable[[int], None]) -> None:
        self.scorer = scorer
        self._loop = loop
        self._show = show
        self._finished = finished
        self._tasks: set[asyncio.Task[None]] = set()

    def finish(self, row: RowResult) -> RowResult | None:
        """`row` with its scores when they can be made now; `None`: a task scores it (then shows and counts it)."""
        if row.status not in DONE:  # a row that did not complete fails its checks; one never started is not scored
            return row if row.status == "not_started" else replace(
                row, scores=self.scorer.unanswered(row.status, row.error))
        if not self.scorer.asynchronous:
            return replace(row, scores=self.scorer.score(row.input, row.results))
        task = self._loop.create_task(self._later(row), name=f"agentcell-batch-score-{row.index}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return None

    async def _later(self, row: RowResult) -> None:
        scores: tuple[Score, ...] = ()
        try:
            scores = await self.scorer.score_async(row.index, row.input, row.results, row.duration or 0.0)
        finally:
            if scores:
                self._show(replace(row, scores=scores))
            self._finished(row.index)

    async def drain(self) -> None:
        """Wait until every row being scored is."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
