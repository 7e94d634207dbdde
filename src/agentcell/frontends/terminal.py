"""Terminal IPython (no running loop between cells): run in the cell and print a live transcript.

The run happens inside `asyncio.run`, so Ctrl-C cancels it like any other asyncio program; the
engine keeps what was produced, the printer marks the answer as stopped, and IPython then reports
the KeyboardInterrupt as usual.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TextIO

from ..events import (
    ApprovalRequested,
    Event,
    ProcessingComplete,
    Retrying,
    RunStarted,
    RunWarning,
    SlotCompleted,
    SlotFailed,
    SlotRetracted,
    SlotStarted,
    ThinkingDelta,
    TokenDelta,
    ToolCompleted,
    ToolStarted,
)
from ..labels import label, retract_label, status_label
from ..result import RunResult
from .launch import LaunchSpec

DIM, RED, GREEN, RESET = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[0m"


class Printer:
    """Writes events as a readable transcript: tokens inline, everything else on its own line."""

    def __init__(self, out: TextIO | None = None, *, color: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self._inline = False

    def __call__(self, event: Event) -> None:
        match event:
            case TokenDelta():
                self._write(event.text, inline=True)
            case ThinkingDelta():
                self._write(self._c(DIM, event.text), inline=True)
            case RunStarted():
                note = " (offline default model: no key, no network)" if event.offline else ""
                self._line(self._c(DIM, f"agentcell · {event.model}{note}"))
            case SlotStarted():
                self._line(f"── {event.slot} ({event.slot_type})")
            case SlotRetracted():
                self._line(self._c(DIM, f"[the text above: {retract_label(event.reason)}]"))
            case ToolStarted():
                via = f" via {label('mcp_server', server=event.server)}" if event.server else ""
                self._line(f"→ {event.tool_name}({json.dumps(event.args, ensure_ascii=False)}){via}")
            case ToolCompleted():
                mark = "cached " if event.was_cached else ""
                body = event.result if event.ok else self._c(RED, event.error or event.result)
                self._line(f"← {event.tool_name} {mark}{event.elapsed_ms:.0f} ms: {_short(body)}")
            case ApprovalRequested():
                via = f" ({label('mcp_server', server=event.server)})" if event.server else ""
                self._line(self._c(RED, f"approval needed for {event.tool_name}{via}; terminal runs deny it"))
            case Retrying():
                self._line(self._c(DIM, f"retrying in {event.delay_s:.1f} s after {event.reason}"))
            case RunWarning():
                self._line(self._c(RED, f"warning: {event.message}"))
            case SlotCompleted() if not isinstance(event.value, str):
                self._line(json.dumps(event.value, ensure_ascii=False, default=repr))
            case SlotFailed():
                self._line(self._c(RED, f"[{event.slot} {status_label(event.status)}: {event.error}]"))
            case ProcessingComplete():
                colour = GREEN if event.status == "completed" else RED
                self._line(self._c(colour, f"── {status_label(event.status)}"))
            case _:
                pass

    def _c(self, code: str, text: str) -> str:
        return f"{code}{text}{RESET}" if self.color else text

    def _write(self, text: str, *, inline: bool) -> None:
        self.out.write(text)
        self.out.flush()
        self._inline = inline

    def _line(self, text: str) -> None:
        self._write(("\n" if self._inline else "") + text + "\n", inline=False)


def _short(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def _run(spec: LaunchSpec, printer: Printer, kept: list[RunResult]) -> RunResult:
    from .launch import start

    run = start(spec)
    try:
        async for event in run.events():
            printer(event)
    except asyncio.CancelledError:
        run.cancel()
        result = await run.wait()
        kept.append(result)
        printer(ProcessingComplete(run_id=result.run_id, status=result.status, result=result))
        raise
    return await run.wait()


def run_in_terminal(spec: LaunchSpec, *, out: TextIO | None = None) -> RunResult:
    """Run to the end inside this call, printing as it goes; Ctrl-C stops it and keeps the partial result."""
    kept: list[RunResult] = []
    try:
        return asyncio.run(_run(spec, Printer(out), kept))
    except KeyboardInterrupt:
        if kept:
            return kept[0]  # asyncio.run re-raises Ctrl-C after our cleanup; the stop is reported
        raise
