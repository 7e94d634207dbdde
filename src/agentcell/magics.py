"""`%%agent` and `%agent`: an adapter from IPython to the library.

The magic parses its line, snapshots the namespace, compiles the template, resolves model and
tools, and hands everything to `handle.start_run`, which starts the run as a task on the kernel's
running loop and returns at once. Every agentcell error becomes a one-line `UsageError` here and
nowhere else. Settings are traitlets on `AgentMagics`, so `%config AgentMagics.model = "…"` works.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from traitlets import Int, Unicode

from .errors import AgentcellError


@magics_class
class AgentMagics(Magics):
    """Run a template cell as a live tool-calling agent."""

    model = Unicode(
        None, allow_none=True, config=True,
        help="Default model for %%agent (any pydantic-ai model string); None → $AGENTCELL_MODEL → offline.",
    )
    max_iter = Int(20, config=True, help="Ceiling of model requests per slot.")
    max_calls = Int(20, config=True, help="Ceiling of tool calls per slot.")
    max_tokens = Int(250_000, config=True, help="Ceiling of output tokens per slot.")

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        from .handle import RunRegistry

        self.registry = RunRegistry()

    @magic_arguments()
    @argument("-m", "--model", help="Model for this cell (e.g. openai:gpt-4o-mini, offline).")
    @argument("-o", "--output", metavar="NAME", help="Bind the run handle to this variable.")
    @argument("-t", "--tools", nargs="+", metavar="NAME", help="Expose exactly these notebook callables as tools.")
    @argument("--context", metavar="EXPR", help="A dict expression of extra template variables.")
    @argument("--max-iter", type=int, metavar="N", help="Ceiling of model requests per slot.")
    @argument("--max-calls", type=int, metavar="N", help="Ceiling of tool calls per slot.")
    @argument("--max-tokens", type=int, metavar="N", help="Ceiling of output tokens per slot.")
    @cell_magic
    def agent(self, line: str, cell: str) -> None:
        """Run the cell as a template; the widget streams the run and Stop cancels it."""
        args = parse_argstring(self.agent, line)
        try:
            handle = self._start(args, cell)
        except AgentcellError as exc:
            raise UsageError(_one_line(exc)) from None
        if args.output:
            self.shell.user_ns[args.output] = handle
        self.shell.user_ns["_agent_run"] = handle
        if handle.widget is not None:
            display(handle.widget)

    @line_magic("agent")
    def agent_line(self, line: str) -> Any:
        """`%agent stop` stops every background run; `%agent config` shows the settings."""
        words = shlex.split(line)
        command = words[0] if words else "config"
        if command == "stop":
            return self.registry.stop_all()
        if command == "config":
            return self._config(words[1:])
        raise UsageError(f"unknown %agent command {command!r}; use one of: config, stop")

    def _config(self, assignments: list[str]) -> dict[str, Any]:
        for item in assignments:
            key, sep, value = item.partition("=")
            if not sep or key not in ("model", "max_iter", "max_calls", "max_tokens"):
                raise UsageError(
                    f"%agent config takes key=value with key in model, max_iter, max_calls, max_tokens; got {item!r}"
                )
            try:
                setattr(self, key, value if key == "model" else int(value))
            except ValueError:
                raise UsageError(f"%agent config {key} needs a whole number, got {value!r}") from None
        return {
            "model": self.model, "max_iter": self.max_iter, "max_calls": self.max_calls, "max_tokens": self.max_tokens,
        }

    def _start(self, args: Any, cell: str) -> Any:
        from pydantic_ai.usage import UsageLimits

        from .handle import launch
        from .notebook import current_cell_id, namespace_snapshot, notebook_tools
        from .template import compile_template

        shell = self.shell
        template = compile_template(cell, name="<%%agent cell>")
        context = namespace_snapshot(shell.user_ns, shell.user_ns_hidden)
        if args.context:
            context.update(self._eval_context(args.context))
        limits = UsageLimits(
            request_limit=args.max_iter or self.max_iter,
            tool_calls_limit=args.max_calls or self.max_calls,
            output_tokens_limit=args.max_tokens or self.max_tokens,
        )
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise UsageError(
                "%%agent needs a running event loop (a Jupyter kernel); use agentcell.complete() here"
            ) from None
        return launch(
            template,
            context=context,
            model=args.model or self.model,
            tools=notebook_tools(shell.user_ns, args.tools),
            limits=limits,
            registry=self.registry,
            key=current_cell_id(shell),
        )

    def _eval_context(self, expr: str) -> dict[str, Any]:
        try:
            value = eval(expr, self.shell.user_ns)
        except Exception as exc:  # the user's expression; report it as one line
            raise UsageError(f"--context {expr!r} failed: {type(exc).__name__}: {exc}") from None
        if not isinstance(value, dict):
            raise UsageError(f"--context must evaluate to a dict, got {type(value).__name__}")
        return value


def _one_line(exc: AgentcellError) -> str:
    """IPython shows a UsageError's text as is; keep the caret lines of template errors."""
    return str(exc)


def load(ipython: Any) -> None:
    """Register the magics (idempotent)."""
    ipython.register_magics(AgentMagics)


def unload(ipython: Any) -> None:
    """Stop every run started from this shell."""
    magics = ipython.magics_manager.registry.get("AgentMagics")
    if magics is not None:
        magics.registry.stop_all()
