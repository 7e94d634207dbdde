"""`%%agent` and `%agent`: an adapter from IPython to the library.

The cell magic parses its line, snapshots the namespace, compiles the template and hands everything
to `handle.launch`, which starts the run as a task on the kernel's running loop and returns at once.
`--wait` cells never reach this magic: an input transformer (`blocking.py`) turns them into a
top-level `await` first. In terminal IPython (no running loop) the run happens inside the cell with
a live printed transcript (`terminal.py`). Every agentcell error becomes a one-line `UsageError`
here and nowhere else. Settings are traitlets on `AgentMagics`, so `%config AgentMagics.model = …`
works.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Bool, Int, Unicode

from ...errors import AgentcellError, TemplateSyntaxError
from ...loops import running_loop
from ...usage import MAX_OUTPUT_TOKENS, MAX_REQUESTS, MAX_TOOL_CALLS, OUTPUT_MODES
from ..registry import RunRegistry
from .audience import until_ended_or_asking
from .batch_args import batch_arguments
from .commands import AgentCommands
from .front import JUPYTER
from .help import NAMES as SUBCOMMANDS
from .help import help_text
from .lesson_args import lesson_arguments, show_cell
from .mcp_cell import McpCommands, mcp_arguments

if TYPE_CHECKING:
    from ..launch import LaunchSpec



@magics_class
class AgentMagics(McpCommands, AgentCommands, Magics):
    """Run a template cell as a live tool-calling agent."""

    model = Unicode(
        None, allow_none=True, config=True,
        help="Default model for %%agent (any pydantic-ai model string); None → $AGENTCELL_MODEL → offline.",
    )
    max_iter = Int(MAX_REQUESTS, config=True, help="Ceiling of model requests per slot.")
    max_calls = Int(MAX_TOOL_CALLS, config=True, help="Ceiling of tool calls per slot.")
    max_tokens = Int(MAX_OUTPUT_TOKENS, config=True, help="Ceiling of output tokens per slot.")
    approve = Unicode("none", config=True, help="Default approval mode: none | writes.")
    interrupt_stops_runs = Bool(
        False, config=True, help="Kernel → Interrupt also stops background runs while the kernel is idle.",
    )
    wait_when_headless = Bool(
        True, config=True,
        help="A plain %%agent cell waits for its run when no live front end shows it (nbclient, papermill, "
             "nbconvert --execute), so the saved notebook holds the finished transcript.",
    )

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.registry = RunRegistry()
        self.observe(self._on_interrupt_setting, names=["interrupt_stops_runs"])

    @property
    def ip(self) -> InteractiveShell:
        """The shell these magics are registered in (always set once loaded)."""
        assert self.shell is not None
        return self.shell

    @magic_arguments("%agent")  # the usage line `%%agent?` shows: IPython adds one `%`, a cell magic needs two
    @argument("-m", "--model", help="Model for this cell (e.g. openai:gpt-4o-mini, offline).")
    @argument("-t", "--tools", nargs="+", metavar="NAME", help="Expose exactly these notebook callables as tools.")
    @argument("--context", metavar="EXPR", help="A dict expression of extra template variables.")
    @argument("--deps", metavar="EXPR", help="An expression whose value reaches tools as RunContext.deps.")
    @argument("--max-iter", type=int, metavar="N", help="Ceiling of model requests per slot.")
    @argument("--max-calls", type=int, metavar="N", help="Ceiling of tool calls per slot.")
    @argument("--max-tokens", type=int, metavar="N", help="Ceiling of output tokens per slot.")
    @argument("--approve", choices=("none", "writes"), help="Ask before every non-readonly tool call (writes).")
    @argument("--output-mode", choices=OUTPUT_MODES, help="How typed slots ask for their value: tool, native, "
              "prompted (JSON in the text, for servers without tool calls) or auto (default: tool, else prompted).")
    @argument("--wait", action="store_true", help="Block the cell until the run ends (Run All, nbclient).")
    @argument("--no-wait", dest="no_wait", action="store_true",
              help="Return at once even when no live front end shows the run (headless runners wait otherwise).")
    @argument("--continue", dest="continue_from", metavar="NAME", help="Continue the conversation of run NAME.")
    @argument("--record", metavar="FILE", help="Write every model response of the run to a JSON cassette.")
    @argument("--replay", metavar="FILE", help="Answer from a recorded cassette: no network, same run.")
    @argument("--include-path", dest="include_paths", action="append", default=[], metavar="DIR",
              help="Also look for <include src=…/> files in DIR (repeatable; relative to the notebook's folder). "
                   "Includes may not leave these folders and the notebook's; `--include-path /` allows any file.")
    @argument("--types", dest="types", action="append", default=[], metavar="FILE",
              help="struckdown YAML type definitions (a file or folder; repeatable): [[name:var]] gives that type.")
    @batch_arguments
    @argument("--models", metavar="A,B,C",
              help="Run the cell once per model, concurrently, side by side (model strings or notebook variables).")
    @mcp_arguments
    @lesson_arguments
    @argument("-o", "--output", metavar="NAME", help="Bind the run handle to this variable.")
    @argument("-q", "--quiet", action="store_true", help="No widget; the run is reachable through its handle.")
    @argument("--describe-media", dest="describe_media", metavar="MODEL",
              help="Have MODEL describe the images/documents/audio the cell's model cannot read.")
    @cell_magic
    def agent(self, line: str, cell: str) -> Any:
        """Run the cell as a template; the widget streams the run and Stop cancels it."""
        if "--models" in line:
            return self._compare(line, cell) and None
        if "--over" in line:
            return self._batch(line, cell) and None
        spec = self.prepare(line, cell)
        if running_loop() is None:
            from ..terminal import run_in_terminal

            if spec.options.step:  # nothing could press Next: the run would wait forever inside the cell
                raise UsageError("--step and --predict need a notebook (the widget's Next button) or "
                                 "agentcell.start_run(..., step=True) in async code; a terminal runs the cell "
                                 "to its end")
            try:
                self._bind(spec, run_in_terminal(spec))
            except AgentcellError as exc:
                raise UsageError(str(exc)) from None
            return None
        if spec.wait:
            # Only reached when the input transformer is not installed (e.g. %%agent via run_cell_magic).
            raise UsageError("--wait needs `%load_ext agentcell` to have installed its input transformer")
        handle = self._launch(spec)
        show_cell(handle, spec, line, cell)
        if handle.widget is not None:
            JUPYTER.display(handle.widget)
        return None

    async def agent_wait(self, line: str, cell: str, *, headless: bool = False) -> Any:
        """The `--wait` form: started the same way, then awaited as the cell's top-level `await`.

        `headless=True`: a plain cell that waits only because nobody is watching (`audience.py`). It
        says so in its output and, like a plain cell, has no value: the run is in `_agent_run` / `-o`.
        """
        from .audience import ASKING, WAITED

        if "--models" in line:
            comparison = self._compare(line, cell)
            if headless:
                print(WAITED)
            try:
                value = await comparison
            except asyncio.CancelledError:
                comparison.cancel()  # Kernel → Interrupt: stop every model
                raise
            return None if headless else value
        if "--over" in line:
            from .batch_launch import wait_batch

            batch = self._batch(line, cell)
            if headless:
                print(WAITED)
            value = await wait_batch(batch)
            return None if headless else value
        spec = self.prepare(line, cell)
        handle = self._launch(spec)
        show_cell(handle, spec, line, cell)
        if handle.widget is not None:
            JUPYTER.display(handle.widget)
        if headless:
            print(WAITED)
        try:
            if headless:
                if await until_ended_or_asking(handle):
                    print(ASKING)
                return None
            return await handle
        except asyncio.CancelledError:
            # Kernel → Interrupt cancels the awaiting cell: stop the run and let the widget show it.
            handle.cancel()
            await asyncio.shield(handle.run.wait())
            raise

    def prepare(self, line: str, cell: str) -> LaunchSpec:
        """Parse the line and build everything the run needs; UsageError for anything wrong."""
        args = parse_argstring(self.agent, line)
        try:
            return self._spec(args, cell)
        except TemplateSyntaxError as exc:
            raise UsageError(str(_numbered_as_in_the_cell(exc, line))) from None
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None

    def _spec(self, args: Any, cell: str, build: Any = None) -> LaunchSpec:
        from .cell import build_spec, cell_options
        from .lesson_args import with_lesson_flags
        from .mcp_cell import cell_toolsets, taped

        build_spec = build or build_spec
        toolsets, tools = cell_toolsets(args, self.ip.user_ns)
        toolsets = taped(toolsets, record=args.record, replay=args.replay)
        for flag in ("max_iter", "max_calls", "max_tokens"):
            value = getattr(args, flag)
            if value is not None and value < 1:
                raise UsageError(f"--{flag.replace('_', '-')} must be a positive whole number, got {value}")
        if args.max_cost is not None and not args.max_cost > 0:
            raise UsageError(f"--max-cost must be a positive number of US dollars, got {args.max_cost}")
        options = cell_options(
            model=self._model(args.model) or self.model,
            context=self._eval(args.context, "--context", dict) if args.context else None,
            deps=self._eval(args.deps, "--deps", object) if args.deps else None,
            max_iter=args.max_iter or self.max_iter,
            max_calls=args.max_calls or self.max_calls,
            max_tokens=args.max_tokens or self.max_tokens,
            approve=args.approve or self.approve,
            history_from=self._history(args.continue_from),
            max_cost=args.max_cost,
            output_mode=args.output_mode or "auto",
        )
        if getattr(args, "describe_media", None):
            options = replace(options, describe_media=args.describe_media)
        options = replace(options, toolsets=(*options.toolsets, *toolsets))
        options = with_lesson_flags(options, args)
        return build_spec(
            cell,
            options,
            user_ns=self.ip.user_ns,
            hidden=self.ip.user_ns_hidden,
            tools=tools,
            record=args.record,
            replay=args.replay,
            include_paths=tuple(args.include_paths),
            types=tuple(args.types),
            wait=args.wait,
            quiet=args.quiet,
            output=args.output,
            shell=self.ip,
        )

    def _batch(self, line: str, cell: str) -> Any:
        """`--over`: start the batch, show its widget, bind it with `-o` (`batch_launch.py`)."""
        from .batch_launch import batch_spec, launch_from_cell

        args = parse_argstring(self.agent, line)
        try:
            spec, batch = launch_from_cell(args, lambda: self._spec(args, cell, build=batch_spec),
                                           lambda expr, flag="--over": self._eval(expr, flag, object), self.registry)
        except TemplateSyntaxError as exc:
            raise UsageError(str(_numbered_as_in_the_cell(exc, line))) from None
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None
        return self._bind(spec, batch)

    def _compare(self, line: str, cell: str) -> Any:
        """`--models A,B,C`: one run per model, side by side (`compare_launch.py`); `-o` binds the `Comparison`."""
        from .compare_launch import compare_from_cell

        args = parse_argstring(self.agent, line)
        try:
            spec, comparison = compare_from_cell(
                args, lambda one, build=None: self._spec(one, cell, build=build), self._model,
                lambda expr, flag="--over": self._eval(expr, flag, object), self.registry)
        except TemplateSyntaxError as exc:
            raise UsageError(str(_numbered_as_in_the_cell(exc, line))) from None
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None
        return self._bind(spec, comparison)

    def _launch(self, spec: LaunchSpec) -> Any:
        from ..handle import launch

        try:
            handle = launch(spec, registry=self.registry)
        except AgentcellError as exc:
            raise UsageError(str(exc)) from None
        return self._bind(spec, handle)

    def _bind(self, spec: LaunchSpec, value: Any) -> Any:
        if spec.output:
            self.ip.user_ns[spec.output] = value
        self.ip.user_ns["_agent_run"] = value
        return value

    def _model(self, name: str | None) -> Any:
        """`-m NAME` may name a notebook variable holding a pydantic-ai `Model` (e.g. a FunctionModel)."""
        if name is None or not name.isidentifier():
            return name
        from pydantic_ai.models import Model

        value = self.ip.user_ns.get(name)
        if isinstance(value, Model) or ":" in name or name in ("offline", "test"):
            return value if isinstance(value, Model) else name
        import difflib

        models = [k for k, v in self.ip.user_ns.items() if isinstance(v, Model) and not k.startswith("_")]
        close = difflib.get_close_matches(name, models, n=3)
        tried = (f"no notebook variable {name!r} holds a pydantic-ai Model" if value is None
                 else f"the notebook variable {name!r} is a {type(value).__name__}, not a pydantic-ai Model")
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise UsageError(f"-m {name}: {tried}, and {name!r} is not a model name (those look like "
                         f"'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5' or 'offline'){hint}")

    def _history(self, name: str | None) -> Any:
        if name is None:
            return None
        value = self.ip.user_ns.get(name)
        result = getattr(value, "result", None)
        messages = getattr(result() if callable(result) else value, "messages", None)
        if messages is None:
            raise UsageError(f"--continue {name!r}: no finished run by that name (bind one with -o {name})")
        return tuple(messages)

    def _eval(self, expr: str, flag: str, kind: type) -> Any:
        if len(expr) >= 2 and expr[0] == expr[-1] and expr[0] in "\"'":
            expr = expr[1:-1]  # IPython's argument splitter keeps the quotes around `--context "{…}"`
        try:
            value = eval(expr, self.ip.user_ns)
        except Exception as exc:  # the user's expression; report it as one line
            raise UsageError(f"{flag} {expr!r} failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(value, kind):
            raise UsageError(f"{flag} must evaluate to a {kind.__name__}, got {type(value).__name__}")
        return value

    # ---- %agent ----------------------------------------------------------------------------
    # IPython's stubs type a named line_magic's argument as Never; the runtime accepts the method.
    @line_magic("agent")  # type: ignore[arg-type]
    def agent_line(self, line: str) -> Any:
        """`%agent COMMAND …`; the docstring is replaced by `help_text()` below the class (what `%agent?` shows)."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            raise UsageError(f"%agent: {exc}") from None
        command, rest = (words[0], words[1:]) if words else ("help", [])
        if command not in SUBCOMMANDS:
            raise UsageError(f"unknown %agent command {command!r}; use one of: {', '.join(SUBCOMMANDS)}")
        return getattr(self, f"_cmd_{command}")(rest)

    def _cmd_help(self, rest: list[str]) -> None:
        """`%agent` and `%agent help`: every subcommand with one line, and the model the next cell uses."""
        print(help_text(self._effective_model()))

    def _on_interrupt_setting(self, change: Any) -> None:
        from .blocking import install_interrupt_hook

        install_interrupt_hook(self.ip, self.registry, enabled=bool(change["new"]))


# What `%agent?` shows (IPython's stubs type a named line magic as Never, as above).
AgentMagics.agent_line.__doc__ = help_text() + "\n\nEach is described in the README's magics reference."  # type: ignore[assignment]


def _numbered_as_in_the_cell(exc: TemplateSyntaxError, line: str) -> TemplateSyntaxError:
    """Line numbers as the notebook shows them: the `%%agent` line is line 1, the template starts on 2.

    An error inside an included file keeps that file's own numbering.
    """
    from .cell import CELL_NAME  # already imported: the error came from compiling the cell there

    if exc.name != CELL_NAME:
        return exc
    exc.line += 1
    if exc.source is not None:
        exc.source = f"%%agent {line}\n{exc.source}"
    return exc


def load(ipython: Any) -> None:
    """Register the magics and the `--wait` input transformer (idempotent)."""
    from . import batch_display, export_wait
    from .blocking import install_transformer

    if "AgentMagics" not in ipython.magics_manager.registry:
        ipython.register_magics(AgentMagics)
    install_transformer(ipython)
    export_wait.install(ipython)
    batch_display.register(ipython)  # `agentcell.map(...)` as a cell's value: its live view


def unload(ipython: Any) -> None:
    """Stop every run started from this shell and remove the transformer."""
    from . import export_wait
    from .blocking import remove_transformer

    magics = ipython.magics_manager.registry.get("AgentMagics")
    if magics is not None:
        magics.registry.stop_all()
    remove_transformer(ipython)
    export_wait.remove(ipython)
