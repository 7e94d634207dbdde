"""Guards (`[[halt:…]]`) running beside the slots that follow them.

A guard starts when the run reaches it and runs as its own task, so it costs no latency on an
ordinary request. It is *joined* (awaited) before anything irreversible: the first answer token
shown, the first call of a tool not marked `@readonly`, an approval prompt, a render that reads the
guard's value, and the end of the run. Between those points `poll()` notices a guard that already
finished, so a trip stops the run as soon as it is seen. struckdown did not join before non-streamed
slots or actions; here every irreversible step goes through `join()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import Event, GuardTripped


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A guard's answer and whether it trips (`triggered` equals the slot's `when`)."""

    triggered: bool
    reason: str
    tripped: bool


class GuardTrip(Exception):
    """A guard tripped; carries the results from before the guard."""

    def __init__(self, guard: str, reason: str, results: Mapping[str, Any]) -> None:
        super().__init__(f"halted at [[halt:{guard}]]: {reason}")
        self.guard = guard
        self.reason = reason
        self.results = dict(results)


@dataclass(eq=False, kw_only=True)
class _Pending:
    name: str
    task: asyncio.Task[Verdict]
    results_before: dict[str, Any] = field(default_factory=dict)


class Guards:
    """The run's guards that have not been joined yet."""

    def __init__(self, run_id: str, emit: Callable[[Event], None]) -> None:
        self._run_id = run_id
        self._emit = emit
        self._pending: list[_Pending] = []
        self._trip: GuardTrip | None = None

    @property
    def pending_names(self) -> frozenset[str]:
        if not self._pending:  # read before every slot's render: nothing to build when no guard is out
            return frozenset()
        return frozenset(guard.name for guard in self._pending)

    def launch(self, name: str, verdict: Coroutine[Any, Any, Verdict], results_before: Mapping[str, Any]) -> None:
        """Start a guard beside the run; `results_before` is what a trip hands back."""
        task = asyncio.get_running_loop().create_task(verdict, name=f"agentcell-guard-{name}")
        self._pending.append(_Pending(name=name, task=task, results_before=dict(results_before)))

    def poll(self) -> None:
        """Settle every guard that already finished; raise `GuardTrip` if one tripped."""
        self._raise_if_tripped()
        if self._pending:  # poll runs once per streamed event: nothing to build when no guard is out
            for guard in [g for g in self._pending if g.task.done()]:
                self._settle(guard)

    @property
    def idle(self) -> bool:
        """No guard is out and none tripped: `join()` would return at once (callers per token skip the await)."""
        return not self._pending and self._trip is None

    async def join(self) -> None:
        """Wait for every pending guard; raise `GuardTrip` if one tripped (and on every later join)."""
        self._raise_if_tripped()
        while self._pending:
            guard = self._pending[0]
            await asyncio.shield(guard.task)
            if guard in self._pending:
                self._settle(guard)
            self._raise_if_tripped()

    async def cancel(self) -> None:
        """Cancel guards still running (the run ended another way) and wait until they are gone."""
        tasks = [guard.task for guard in self._pending]
        self._pending.clear()
        for task in tasks:
            task.cancel()
        while not all(task.done() for task in tasks):
            try:
                await asyncio.wait(tasks)
            except asyncio.CancelledError:
                # A Stop that lands while the run is already ending changes nothing but must not
                # leave guard tasks behind.
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
        for task in tasks:
            if not task.cancelled():
                task.exception()  # retrieved: a guard that failed after the run ended is not news

    def _settle(self, guard: _Pending) -> None:
        self._pending.remove(guard)
        verdict = guard.task.result()  # a guard that failed fails the run: the input was never cleared
        if verdict.tripped and self._trip is None:
            self._emit(GuardTripped(run_id=self._run_id, slot=guard.name, reason=verdict.reason))
            results = {
                **guard.results_before,
                guard.name: {"triggered": verdict.triggered, "reason": verdict.reason},
            }
            self._trip = GuardTrip(guard.name, verdict.reason, results)
        self._raise_if_tripped()

    def _raise_if_tripped(self) -> None:
        if self._trip is not None:
            raise self._trip
