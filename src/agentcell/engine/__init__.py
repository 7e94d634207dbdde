"""The run engine: a compiled template → a live, stoppable pydantic-ai tool-calling run.

One code path under every surface:

* `start_run(template, **options) -> Run` (the keywords are `RunOptions`' fields; `start(template,
  options)` takes them as one value) — checks the template, context and tools (raising before any
  model call), then starts the run as a task on the **running** loop and returns at once. The
  widget/magic use this:

  - `run.events()` — async iterator over every event from `RunStarted` to the single
    `ProcessingComplete` (any number of readers; a late reader gets the whole run so far);
  - `run.events_so_far` — the same as a snapshot tuple;
  - `run.cancel()` — Stop; safe from any thread (uses `loop.call_soon_threadsafe`), idempotent;
  - `await run` / `await run.wait()` → `RunResult` (cancelling the *waiter* does not stop the run);
  - `run.status` (`"running"` or the final status), `run.result`, `run.done()`, `run.exception`;
  - `run.resume()` — after a Stop, the next segment of the same run (a new `Run`, same run id).

Long runs: every request reports `ContextUpdated` against the model's window; past
`Compaction.threshold` older turns are summarized (`compaction=None` turns that off); every event is
journaled to `<data dir>/agentcell/journal/<run_id>.jsonl` (`journal=False` turns that off) and
`agentcell.journal.load(run_id)` restores a run whose process died.

* `stream(...)` — the same run as an async generator of events; closing it (`aclose()`) or cancelling
  the task that iterates it stops the run, which still ends with `status="stopped"` (read it with
  `await run` if you hold the `Run`, or from `ProcessingComplete` when draining `start_run`'s events).
* `await complete_async(...) -> RunResult`; `complete(...)` is its synchronous form for scripts.
* `complete_incremental_async(...)` — `stream` under struckdown's name and keywords (`on_halt`, `stream`).

`complete`, `complete_async` and `complete_incremental_async` also take struckdown's `credentials=` (a key
and base URL that build the model, see `agentcell.credentials`) and its `LLM(model_name=…)` as `model=`;
they are front-only keywords: the model is built before `RunOptions`, so no key reaches the engine's values.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Literal, Unpack

from ..errors import BudgetExhausted, EventLoopRunning, Halted, RunError
from ..events import Event, ProcessingComplete, SlotRetracted, TokenDelta
from ..options import (
    ApprovalDecision,
    ApproveCallback,
    Compaction,
    CompleteOptionsKwargs,
    RunOptions,
    StreamOptionsKwargs,
    option_keywords,
    options_for,
)
from ..providers.credentials import Credentials, ModelLike, model_with_credentials
from ..result import RunResult
from ..template.program import Template
from .forking import fork_run
from .runner import Run
from .setup import Prepared, prepare, start, start_run

__all__ = [
    "ApprovalDecision",
    "ApproveCallback",
    "Compaction",
    "Prepared",
    "Run",
    "RunOptions",
    "complete",
    "complete_async",
    "complete_incremental_async",
    "fork_run",
    "prepare",
    "start",
    "start_run",
    "stream",
]


@option_keywords
async def stream(template: Template | str, **options: Unpack[StreamOptionsKwargs]) -> AsyncGenerator[Event, None]:
    """Run `template` and yield its events; leaving the loop early stops the run (keywords: `RunOptions`)."""
    run = start(template, options_for(stream, options))  # in the generator's body: `aclose()` must reach it
    try:
        async for event in run.events():
            yield event
    finally:
        if not run.done():
            run.cancel()
            # Wait for the stop to land so `aclose()` returns with the provider request closed; if
            # the consumer itself is being cancelled, the run still finishes on its own task.
            await run.wait()


@option_keywords
async def complete_async(
    template: Template | str,
    *,
    model: ModelLike = None,
    on_halt: Literal["raise", "return"] = "raise",
    credentials: Credentials | None = None,
    **options: Unpack[CompleteOptionsKwargs],
) -> RunResult:
    """Run `template` to the end and return its result (keywords: `RunOptions`, then `on_halt`, `credentials`).

    Raises:
        ModelConfigError: `credentials` cannot build the model (see `agentcell.credentials`).
        Halted: a guard tripped (unless `on_halt="return"`); `.result` holds results from before it.
        BudgetExhausted: a slot hit its ceiling; `.result` keeps the transcript.
        RunError: the run failed; `.result` keeps what it produced.
    """
    chosen = options_for(complete_async, options, model=model_with_credentials(model, credentials))
    return await _complete(template, chosen, on_halt=on_halt)


async def _complete(template: Template | str, options: RunOptions, *, on_halt: Literal["raise", "return"]) -> RunResult:
    run = start(template, options)
    try:
        result = await run.wait()
    except asyncio.CancelledError:
        run.cancel()
        raise
    return _checked(result, on_halt=on_halt, cause=run.exception)


def _checked(result: RunResult, *, on_halt: Literal["raise", "return"], cause: BaseException | None) -> RunResult:
    message = result.error or result.status
    if result.status == "halted" and on_halt == "raise":
        raise Halted(message, result=result)
    if result.status == "budget_exhausted":
        raise BudgetExhausted(message, result=result)
    if result.status == "failed":
        raise RunError(message, result=result) from cause
    return result


@option_keywords
def complete(
    template: Template | str,
    *,
    model: ModelLike = None,
    on_halt: Literal["raise", "return"] = "raise",
    credentials: Credentials | None = None,
    **options: Unpack[CompleteOptionsKwargs],
) -> RunResult:
    """The synchronous `complete_async`, for scripts and terminal IPython (no running event loop).

    The result reads by slot name too (`result["answer"]`), as struckdown's does.
    """
    chosen = options_for(complete, options, model=model_with_credentials(model, credentials))
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise EventLoopRunning(
            "complete() cannot run inside a running event loop (Jupyter, async code); "
            "use `await complete_async(...)` or the %%agent magic"
        )
    return asyncio.run(_complete(template, chosen, on_halt=on_halt))


@option_keywords
async def complete_incremental_async(
    template: Template | str,
    *,
    model: ModelLike = None,
    on_halt: Literal["raise", "return"] = "raise",
    credentials: Credentials | None = None,
    stream: bool = True,
    **options: Unpack[CompleteOptionsKwargs],
) -> AsyncGenerator[Event, None]:
    """struckdown's name for `stream()`: the same run and events (`agentcell.incremental` names them), its keywords.

    `stream=False` leaves out the answer's `TokenDelta` / `SlotRetracted` (tool events come either way).
    A guard trip raises `Halted` in place of the final event, unless `on_halt="return"`. `aclose()` after
    leaving the loop cancels the provider call in flight.
    """
    chosen = options_for(complete_incremental_async, options, model=model_with_credentials(model, credentials))
    run = start(template, chosen)  # in this body, as in `stream`, so `aclose()` reaches the `finally`
    try:
        async for event in run.events():
            if _passes(event, stream=stream, on_halt=on_halt):
                yield event
    finally:
        if not run.done():
            run.cancel()
            await run.wait()


def _passes(event: Event, *, stream: bool, on_halt: Literal["raise", "return"]) -> bool:
    """Whether `complete_incremental_async` yields `event`; raises `Halted` in place of a halted run's last event."""
    if isinstance(event, ProcessingComplete) and event.status == "halted" and on_halt == "raise":
        raise Halted(event.result.error or event.status, result=event.result)
    return stream or not isinstance(event, TokenDelta | SlotRetracted)
