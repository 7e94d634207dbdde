"""The `%agent` subcommands (`config`, `tools`, `stop`, `show`, `export`, `journal`) as a mixin of `AgentMagics`.

Kept apart from `magics.py` (the cell magic and its flags) so each file keeps one job; the methods
read the magics' traits and shell through `self`, and raise `UsageError` for anything a person typed
wrong, as the cell magic does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ...errors import AgentcellError
from ...loops import running_loop
from .front import JUPYTER

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..registry import LiveRun, RunRegistry

CONFIG_KEYS = ("model", "max_iter", "max_calls", "max_tokens", "approve", "interrupt_stops_runs")
"""What `%agent config key=value` may set (each is also a traitlet of `AgentMagics`)."""


class AgentCommands:
    """`%agent config|tools|stop|show|export` (mixed into `AgentMagics`)."""

    @property
    def ip(self) -> InteractiveShell:
        raise NotImplementedError  # AgentMagics provides the shell

    registry: RunRegistry
    model: str | None
    approve: str
    interrupt_stops_runs: bool

    def _cmd_config(self, assignments: list[str]) -> dict[str, Any]:
        for item in assignments:
            key, sep, value = item.partition("=")
            if not sep or key not in CONFIG_KEYS:
                raise UsageError(f"%agent config takes key=value with key in {', '.join(CONFIG_KEYS)}; got {item!r}")
            self._set(key, value)
        shown = {key: getattr(self, key) for key in CONFIG_KEYS}
        shown["model"] = self._effective_model()
        return shown

    def _effective_model(self) -> str:
        """The model the next cell without `-m` uses, and where that choice comes from."""
        import os

        if self.model:
            return str(self.model)
        env = os.environ.get("AGENTCELL_MODEL", "").strip()
        return f"{env} (from AGENTCELL_MODEL)" if env else "offline (default)"

    def _set(self, key: str, value: str) -> None:
        if key == "model":
            self.model = value or None
        elif key == "approve":
            if value not in ("none", "writes"):
                raise UsageError(f"%agent config approve must be none or writes, got {value!r}")
            self.approve = value
        elif key == "interrupt_stops_runs":
            if value.lower() not in ("true", "false", "1", "0", "on", "off"):
                raise UsageError(f"%agent config interrupt_stops_runs must be true or false, got {value!r}")
            self.interrupt_stops_runs = value.lower() in ("true", "1", "on")
        else:
            try:
                number = int(value)
            except ValueError:
                raise UsageError(f"%agent config {key} needs a whole number, got {value!r}") from None
            if number < 1:
                raise UsageError(f"%agent config {key} must be positive, got {number}")
            setattr(self, key, number)

    def _cmd_tools(self, names: list[str]) -> dict[str, Any]:
        from .cell import tool_schemas
        from .mcp_cell import mcp_tool_entries
        from .tool_table import ToolTable

        try:
            table = ToolTable(tool_schemas(self.ip.user_ns, names or None))
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None
        if not names:
            table.update(mcp_tool_entries())  # the tools of the MCP servers running in this kernel
        return table

    def _cmd_stop(self, rest: list[str]) -> int:
        from ..registry import PYTHON_RUNS
        from .tool_table import Stopped

        if not rest or rest == ["all"]:  # the cells' runs, then those `agentcell.show()` started
            return Stopped.of([self._run_name(h) for h in [*self.registry.stop_all(), *PYTHON_RUNS.stop_all()]])
        if len(rest) != 1:
            raise UsageError("usage: %agent stop [all | NAME]")
        live = self._live(rest[0])
        was_running = not live.done
        live.cancel()
        return Stopped.of([rest[0]] if was_running else [])

    def _live(self, name: str) -> LiveRun:
        """What `%agent stop NAME` stops: the variable `NAME` when it holds anything that runs (a run, a batch: any
        `LiveRun`), else the kept run whose id is `NAME` (`%agent stop` names unbound runs by their id)."""
        from ..registry import PYTHON_RUNS, LiveRun

        value = self.ip.user_ns.get(name)
        if isinstance(value, LiveRun):
            return value
        kept = self.registry.runs.get(name) or PYTHON_RUNS.runs.get(name)
        if kept is not None:
            return kept
        if name in self.ip.user_ns:
            kind = type(value).__name__
            article = "an" if kind[:1].lower() in "aeiou" else "a"
            raise UsageError(f"{name!r} holds {article} {kind}, not a run or a batch: there is nothing of it to stop")
        raise UsageError(f"nothing running is called {name!r}: no variable of that name (bind a run or a batch with "
                         f"-o {name}) and no run id of a run still kept")

    def _run_name(self, handle: Any) -> str:
        """The variable a run is bound to (`-o NAME`), else its run id."""
        bound = next((k for k, v in self.ip.user_ns.items() if v is handle and not k.startswith("_")), None)
        return bound or f"run {getattr(handle, 'run_id', '?')}"

    def _cmd_show(self, rest: list[str]) -> None:
        if len(rest) != 1:
            raise UsageError("usage: %agent show NAME | RUN_ID")
        name = rest[0]
        if name not in self.ip.user_ns and _looks_like_run_id(name):
            self._show_journal(name)
            return
        handle = self._handle(name, results=True)
        if getattr(handle, "widget", None) is None and running_loop() is None:
            self._print_run(handle.run_id)  # terminal IPython: the transcript as text
            return
        if isinstance(handle, _result_type()):
            self._show_journal(handle.run_id)
            return
        if handle.widget is None:
            raise UsageError(f"run {name!r} has no widget (it was started with --quiet or in a terminal)")
        JUPYTER.display(handle.widget)

    def _print_run(self, run_id: str) -> None:
        from ...journal import load
        from ...render.html import transcript_text

        try:
            record = load(run_id)
        except (OSError, AgentcellError) as exc:
            raise UsageError(f"no journal for run {run_id!r}: {exc}") from None
        print(transcript_text(record.transcript()))

    def _show_journal(self, run_id: str) -> None:
        """Rebuild a run's widget from its journal (e.g. after the kernel died mid-run)."""
        from ...events import ProcessingComplete
        from ...journal import load
        from ..widget.widget import AgentWidget

        try:
            record = load(run_id)
        except (OSError, AgentcellError) as exc:
            raise UsageError(f"no journal for run {run_id!r}: {exc}") from None
        widget = AgentWidget()
        for event in record.events:
            widget.apply(event)
        if not record.finished:
            result = record.to_result()
            widget.apply(ProcessingComplete(run_id=run_id, status=result.status, result=result))
        JUPYTER.display(widget)

    def _cmd_journal(self, rest: list[str]) -> None:
        """`%agent journal [list] | clean [all | DAYS]` (see `journal/store.py`)."""
        from ...journal import journal_command

        try:
            print(journal_command(rest))
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None

    def _cmd_export(self, rest: list[str]) -> str:
        if len(rest) >= 2 and rest[-1].lower().endswith((".html", ".htm")):
            return self._export_lesson(rest[:-1], rest[-1])
        if len(rest) != 2:
            raise UsageError("usage: %agent export NAME PATH   (PATH ending .openai.json → OpenAI messages, "
                             ".html → a standalone lesson; several NAMEs may go into one lesson)")
        handle, path = self._handle(rest[0], results=True), Path(rest[1]).expanduser()
        if not getattr(handle, "done", True):
            raise UsageError(f"run {rest[0]!r} is still going; export it once it has ended")
        import json

        text = (json.dumps(handle.to_openai(), indent=2, ensure_ascii=False) if path.name.endswith(".openai.json")
                else handle.to_json())
        path.write_text(text, encoding="utf-8")
        return str(path)

    def _export_lesson(self, names: list[str], path: str) -> str:
        """`%agent export NAME [NAME…] lesson.html`: the runs and their teaching views as one HTML file."""
        from ...render.lesson import export_lesson

        handles = [(name, self._handle(name, results=True)) for name in names]
        still = [name for name, handle in handles if not getattr(handle, "done", True)]
        if still:
            raise UsageError(f"run {still[0]!r} is still going; export it once it has ended")
        try:
            return str(export_lesson(path, *handles))
        except (OSError, AgentcellError) as exc:
            raise UsageError(f"cannot export the lesson: {exc}") from None

    async def agent_export(self, line: str) -> None:
        """`%agent export …` as a cell's top-level `await` (`export_wait.py`): wait for the named runs that are
        still going (their Stop still works), export, and say where the file went and how big it is."""
        import contextlib
        import shlex

        from .export_wait import size_text

        try:
            rest = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%agent export: {exc}") from None
        names = rest[:-1] if rest else []
        going = [h for h in (self.ip.user_ns.get(n) for n in names) if not getattr(h, "done", True)]
        for handle in going:
            with contextlib.suppress(Exception):  # the run's own failure is in its result: exported as it ended
                await handle
        path = Path(self._cmd_export(rest))
        print(f"wrote {path} ({size_text(path.stat().st_size)})")

    def _handle(self, name: str, *, results: bool = False) -> Any:
        """The run handle bound to `name`; with `results`, a finished `RunResult` (what `-o` binds in a
        terminal, or `r = %%agent --wait`) is accepted too."""
        from ..handle import RunHandle

        value = self.ip.user_ns.get(name)
        if results and isinstance(value, _result_type()):
            return value
        if not isinstance(value, RunHandle):
            raise UsageError(f"{name!r} is not a run handle; start a run with %%agent -o {name}")
        return value

    def _cmd_fork(self, words: list[str]) -> Any:
        """`%agent fork NAME --round N [--result TOOL_OR_CALL=VALUE …] [--message TEXT] [--model M] [--slot S]
        [-o OUT]`: fork the finished run bound to NAME (its handle's `fork`), shown below the cell."""
        from .fork_args import parse_fork

        request = parse_fork(words)
        handle = self.ip.user_ns.get(request.name)
        from ...result import RunResult

        if isinstance(handle, RunResult):  # `-o NAME` of a `--wait` cell binds the result: shown all the same
            from ..handle import fork_shown

            handle = _ResultForker(handle, fork_shown)
        if not hasattr(handle, "fork"):
            name = request.name
            raise UsageError(f"%agent fork {name}: no run by that name (bind one with %%agent -o {name})")
        model = self._fork_model(request.model)
        try:
            forked = handle.fork(request.round, slot=request.slot, tool_results=request.results or None,
                                 message=request.message, model=model)
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None
        if request.output:
            self.ip.user_ns[request.output] = forked
        self.ip.user_ns["_agent_run"] = forked
        return None

    def _fork_model(self, name: str | None) -> Any:
        """`--model NAME`: a notebook variable holding a pydantic-ai `Model`, else the model string itself."""
        if name is None:
            return None
        value = self.ip.user_ns.get(name)
        from pydantic_ai.models import Model

        return value if isinstance(value, Model) else name



def _result_type() -> type[Any]:
    from ...result import RunResult

    return RunResult


def _looks_like_run_id(name: str) -> bool:
    return len(name) >= 8 and all(ch in "0123456789abcdef" for ch in name)


class _ResultForker:
    """A `RunResult` whose `fork` is shown like a handle's (`handle.fork_shown`)."""

    def __init__(self, result: Any, fork_shown: Any) -> None:
        self._result, self._fork_shown = result, fork_shown

    def fork(self, round: int, **kwargs: Any) -> Any:
        return self._fork_shown(self._result, round, **kwargs)
