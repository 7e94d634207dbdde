"""Anything a tool or a model raises, `BaseException` included, ends in exactly one `ProcessingComplete`
and never reaches the event loop (where `SystemExit`/`KeyboardInterrupt` from a task end the loop:
in a kernel, no reply to `1+1` ever again).

Before: a tool calling `sys.exit(2)` (argparse on a bad flag) or raising `KeyboardInterrupt` /
`GeneratorExit`, and a model raising `SystemExit`, escaped the run's task; the loop died with it. A
tool raising `CancelledError` ended the run `stopped`. An exception whose `__str__` raised failed the
run. A tool swallowing cancellation held Stop for as long as it slept.
After: a tool's `SystemExit`/`KeyboardInterrupt` shows the call failed and ends the run `failed`; its
other exceptions (`GeneratorExit`, its own `CancelledError`) are errors the model reads; a model's end
the run `failed`; Stop abandons a tool that ignores it, with a warning naming it.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from agentcell.engine import start_run
from agentcell.engine.tooltask import ABANDON_AFTER_S
from agentcell.events import ApprovalRequested, Event, ProcessingComplete, RunWarning
from agentcell.tools import tool
from tests.engine.conftest import Call, Final, Raise, Script, brief, routed, slot, template

pytestmark = pytest.mark.anyio


def _endings(events: tuple[Event, ...]) -> list[ProcessingComplete]:
    return [e for e in events if isinstance(e, ProcessingComplete)]


async def _run(script: Script, tools: list[Any], **options: Any) -> tuple[Any, tuple[Event, ...]]:
    run = start_run(template(slot("answer", use_tools=True)), model=script.model, tools=tools, journal=False, **options)
    result = await run.wait()
    await asyncio.sleep(0)  # the loop still turns (an escaped SystemExit would have ended it)
    assert len(_endings(run.events_so_far)) == 1
    return result, run.events_so_far


def exits(flag: str) -> str:
    """Parse a flag the way argparse does on a bad one."""
    sys.exit(2)


async def exits_async(flag: str) -> str:
    """The same, in an async tool."""
    sys.exit(2)


async def interrupts() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@pytest.mark.parametrize("fn", [exits, exits_async], ids=["sync-in-thread", "async"])
async def test_tool_sys_exit_fails_the_run_once_and_the_loop_lives(fn: Any) -> None:
    script = Script([Call(fn.__name__, {"flag": "--bad"})], ["never asked"])
    result, events = await _run(script, [fn])
    assert result.status == "failed"
    assert result.error == f"the tool {fn.__name__!r} raised SystemExit: 2; the run was ended (the kernel keeps running)"
    assert ("tool_completed", fn.__name__, False, "SystemExit: 2", False) in brief(events)
    assert len(script.requests) == 1


async def test_tool_keyboard_interrupt_fails_the_run() -> None:
    result, events = await _run(Script([Call("interrupts")], ["never asked"]), [interrupts])
    assert result.status == "failed"
    assert result.error == "the tool 'interrupts' raised KeyboardInterrupt; the run was ended (the kernel keeps running)"
    assert ("tool_completed", "interrupts", False, "KeyboardInterrupt", False) in brief(events)


async def test_tool_generator_exit_is_an_error_the_model_reads() -> None:
    async def closes() -> str:
        """Raise GeneratorExit."""
        raise GeneratorExit("closed")

    result, events = await _run(Script([Call("closes")], ["I see it closed."]), [closes])
    assert result.status == "completed" and result.answer == "I see it closed."
    assert ("tool_completed", "closes", False, "GeneratorExit: closed", False) in brief(events)


async def test_tool_own_cancelled_error_is_a_tool_error_not_a_stop() -> None:
    async def gives_up() -> str:
        """Raise CancelledError on its own."""
        raise asyncio.CancelledError

    result, events = await _run(Script([Call("gives_up")], ["It gave up."]), [gives_up])
    assert result.status == "completed" and result.answer == "It gave up."
    text = "CancelledError (raised by gives_up itself; nobody pressed Stop)"
    assert ("tool_completed", "gives_up", False, text, False) in brief(events)


async def test_tool_exception_whose_str_raises_is_a_tool_error() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message for you")

    async def breaks() -> str:
        """Raise an exception that cannot be printed."""
        raise Broken

    result, events = await _run(Script([Call("breaks")], ["ok"]), [breaks])
    assert result.status == "completed"
    text = "Broken: <its message could not be read: __str__ raised>"
    assert ("tool_completed", "breaks", False, text, False) in brief(events)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (GeneratorExit(), "GeneratorExit"),
        (asyncio.CancelledError(), "CancelledError raised inside the slot (nobody pressed Stop)"),
    ],
    ids=["SystemExit", "KeyboardInterrupt", "GeneratorExit", "CancelledError"],
)
async def test_model_raising_a_base_exception_fails_the_run_once(error: BaseException, message: str) -> None:
    result, events = await _run(Script(["Start of an answer", Raise(error)]), [])
    assert result.status == "failed" and result.error == message
    assert brief(events)[-2:] == [("slot_failed", "answer", "failed"), ("processing_complete", "failed", False)]


async def test_approval_callback_raising_system_exit_fails_the_run() -> None:
    @tool(approve=True)
    def write() -> str:
        """Write."""
        return "written"

    async def approve(request: ApprovalRequested) -> bool:
        sys.exit(1)

    result, _ = await _run(Script([Call("write")], ["never"]), [write], approve=approve)
    assert result.status == "failed" and result.error == "SystemExit: 1"


async def test_guard_model_raising_system_exit_fails_the_run() -> None:
    guard = Script([Raise(SystemExit(4))])
    main = Script(["fine"])
    tpl = template(slot("check", "halt", prompt="Unsafe?"), slot("answer"))
    run = start_run(tpl, model=routed(guard, main), journal=False)
    result = await run.wait()
    assert result.status == "failed" and result.error == "SystemExit: 4"
    assert len(_endings(run.events_so_far)) == 1


class Exits(BaseModel):
    """A notebook type whose validator exits (a typed slot's answer is validated inside pydantic-ai)."""

    n: int

    @field_validator("n")
    @classmethod
    def _exit(cls, n: int) -> int:
        sys.exit(5)


async def test_a_typed_answers_validator_raising_system_exit_fails_the_run() -> None:
    from agentcell.engine import start
    from agentcell.options import RunOptions

    run = start("[[Exits:x]]", RunOptions(context={"Exits": Exits}, model=Script([Final({"n": 1})]).model,
                                          journal=False))
    result = await run.wait()
    await asyncio.sleep(0)
    assert result.status == "failed" and result.error == "SystemExit: 5"
    assert len(_endings(run.events_so_far)) == 1


async def test_stop_abandons_a_tool_that_swallows_cancellation() -> None:
    release = asyncio.Event()
    swallowed: list[str] = []

    async def stubborn() -> str:
        """Ignore Stop until released."""
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                swallowed.append("cancel")
        return "too late"

    script = Script([Call("stubborn")], ["never"])
    run = start_run(template(slot("answer", use_tools=True)), model=script.model, tools=[stubborn], journal=False)
    while not any(e.kind == "tool_started" for e in run.events_so_far):
        await asyncio.sleep(0.01)
    run.cancel()
    result = await run.wait()  # ends while the tool is still blocked: Stop did not wait for it
    assert not release.is_set() and swallowed
    assert result.status == "stopped"
    warnings = [e.message for e in run.events_so_far if isinstance(e, RunWarning)]
    assert warnings == [
        f"the tool 'stubborn' did not stop within {ABANDON_AFTER_S:g} s of being cancelled; "
        "it was abandoned and may still be running"
    ]
    release.set()  # let the abandoned call end before the test's loop closes
    await asyncio.sleep(0.05)
