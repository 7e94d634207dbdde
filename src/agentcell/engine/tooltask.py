"""One tool call as a task of its own: whatever the tool raises becomes an `Outcome`, and Stop never waits on it.

Why a task of its own, and why it catches `BaseException`:

* asyncio re-raises `SystemExit` and `KeyboardInterrupt` out of the event loop itself
  (`Task.__step`), so one `sys.exit()` in a tool (argparse does it on a bad flag) would end the
  kernel's loop: no reply to `1+1`, Interrupt ignored. The call's coroutine catches them, so they
  never reach a task boundary; they end the *run* (`Outcome.fatal`), never the process.
* A tool's own `CancelledError` (raised by its code, not by Stop) is a tool error like any other; a
  cancellation of the call's task (Stop, a sibling call that ended the slot) goes through.
* A tool that swallows cancellation would hold Stop for as long as it likes. The caller waits
  `ABANDON_AFTER_S` for it to finish, then leaves it running on its own (kept referenced until it
  ends, `contain.settle_or_abandon`) and says so in a warning naming the tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed

from .contain import ABANDON_AFTER_S as ABANDON_AFTER_S
from .contain import describe, settle_or_abandon, stop_requested


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """How one tool call ended, as the model and the widget will be told."""

    ok: bool
    value: Any = None
    """The tool's return value (when `ok`)."""
    text: str = ""
    """The result or the error as text."""
    retry: ModelRetry | None = None
    """The tool asked for a retry (`ModelRetry`); re-raised to pydantic-ai."""
    replaced: int = 0
    """Lone surrogates replaced in the result (see `results.py`)."""
    fatal: str | None = None
    """The tool asked the process to stop (`SystemExit`, `KeyboardInterrupt`): the run ends `failed` with this."""
    media: tuple[Any, ...] = ()
    """Images (documents, audio) the result carries to the model (`engine/media.py`), shown in the tool card."""


async def execute(
    name: str, run: Callable[[], Awaitable[Any]], *, timeout: float | None, convert: Callable[[Any], Outcome]
) -> Outcome:
    """Call the tool; whatever it raises becomes an `Outcome` (the run goes on unless it is `fatal`).

    `convert` turns a returned value into the successful `Outcome` (inside the call, so a value that
    cannot be shown fails here, as this tool's error, not later in the run).
    """
    try:
        if timeout is None:
            value = await run()
        else:
            with anyio.move_on_after(timeout) as scope:
                value = await run()
            if scope.cancelled_caught:
                return Outcome(ok=False, text=f"TimeoutError: {name} took longer than {timeout:g} s")
        return convert(value)
    except (ApprovalRequired, CallDeferred):
        raise  # pydantic-ai's own control flow for deferred calls
    except ModelRetry as exc:
        return Outcome(ok=False, text=str(exc.message), retry=exc)
    except ToolFailed as exc:
        return Outcome(ok=False, text=str(exc.message))
    except asyncio.CancelledError as exc:
        if stop_requested():
            raise  # Stop (or the slot ending): not the tool's doing
        return Outcome(ok=False, text=f"{describe(exc)} (raised by {name} itself; nobody pressed Stop)")
    except (SystemExit, KeyboardInterrupt) as exc:
        text = describe(exc)
        return Outcome(
            ok=False,
            text=text,
            fatal=f"the tool {name!r} raised {text}; the run was ended (the kernel keeps running)",
        )
    except BaseException as exc:  # the tool's failure is the model's information, not the end of the run
        return Outcome(ok=False, text=describe(exc))


async def run_isolated(name: str, call: Awaitable[Outcome], *, warn: Callable[[str], None]) -> Outcome:
    """Await `call` (an `execute(...)`) as its own task; on cancellation give it `ABANDON_AFTER_S` to end."""
    task: asyncio.Task[Outcome] = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if task.done() and not stop_requested():
            # The call's own task was cancelled from inside (the tool cancelled itself): a tool error.
            return Outcome(ok=False, text=f"CancelledError: {name} was cancelled from inside the tool")
        task.cancel()
        await settle_or_abandon(task, what=f"the tool {name!r}", warn=warn)
        raise
