"""agentcell: run a struckdown-style template as a live, stoppable tool-calling agent in Jupyter.

In a notebook::

    %load_ext agentcell

    %%agent -o run
    Who leads PSYC605? [[answer]]

From Python: `compile_template`, `stream`, `complete_async`, `complete`, `show` (their keywords are
`RunOptions`' fields), `map` (one template over many rows), `stop_all`, `static_transcript`, the
`readonly` / `tool` decorators, `action` (template actions) and `mcp` (an MCP server's tools). Code
written for struckdown runs with `import agentcell as sd`: `complete_incremental_async`, `LLM`,
`LLMCredentials` (`credentials=`), results read by slot name, and struckdown's event names in
`agentcell.incremental`. Everything heavy (pydantic-ai, anywidget) is imported on first use, so
`import agentcell` and `%load_ext agentcell` stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

# name -> module that defines it; resolved lazily by __getattr__ (PEP 562).
_EXPORTS: dict[str, str] = {
    "compile_template": "agentcell.template",
    "stream": "agentcell.engine",
    "complete": "agentcell.engine",
    "complete_async": "agentcell.engine",
    "complete_incremental_async": "agentcell.engine",
    "LLM": "agentcell.providers.credentials",
    "LLMCredentials": "agentcell.providers.credentials",
    "ApprovalDecision": "agentcell.options",
    "Compaction": "agentcell.options",
    "RunOptions": "agentcell.options",
    "record": "agentcell.providers.models",
    "replay": "agentcell.providers",
    "openai_compatible": "agentcell.providers",
    "RetryPolicy": "agentcell.providers",
    "show": "agentcell.frontends.show",
    "stop_all": "agentcell.frontends.show",
    "start_run": "agentcell.frontends.show",
    "static_transcript": "agentcell.render.output",
    "StaticTranscript": "agentcell.render.output",
    "map": "agentcell.batch",
    "compare": "agentcell.batch",
    "Comparison": "agentcell.batch",
    "diff": "agentcell.render.diff",
    "ForkError": "agentcell.errors",
    "RunHandle": "agentcell.frontends.handle",
    "readonly": "agentcell.tools",
    "tool": "agentcell.tools",
    "action": "agentcell.actions",
    "RunResult": "agentcell.result",
    "AgentWidget": "agentcell.frontends.widget.widget",
    "resolve_model": "agentcell.providers.models",
    "offline_model": "agentcell.providers.models",
    "AgentcellError": "agentcell.errors",
    "TemplateSyntaxError": "agentcell.errors",
    "UndefinedVariableError": "agentcell.errors",
    "TemplateRenderError": "agentcell.errors",
    "ToolDefinitionError": "agentcell.errors",
    "ModelConfigError": "agentcell.errors",
    "RunError": "agentcell.errors",
    "Halted": "agentcell.errors",
    "BudgetExhausted": "agentcell.errors",
    "ReplayDivergence": "agentcell.errors",
    "ProviderError": "agentcell.errors",
    "EventLoopRunning": "agentcell.errors",
    "NoEventLoop": "agentcell.errors",
    "MediaError": "agentcell.errors",
    "image": "agentcell.media",
    "document": "agentcell.media",
    "audio": "agentcell.media",
    "table": "agentcell.media",
    "headless": "agentcell.frontends.jupyter.audience",
    "McpServerError": "agentcell.errors",
    "mcp": "agentcell.mcp_servers",
}

__all__ = [
    "LLM",
    "AgentWidget",
    "AgentcellError",
    "ApprovalDecision",
    "BudgetExhausted",
    "Compaction",
    "Comparison",
    "EventLoopRunning",
    "ForkError",
    "Halted",
    "LLMCredentials",
    "McpServerError",
    "MediaError",
    "ModelConfigError",
    "NoEventLoop",
    "ProviderError",
    "ReplayDivergence",
    "RetryPolicy",
    "RunError",
    "RunHandle",
    "RunOptions",
    "RunResult",
    "StaticTranscript",
    "TemplateRenderError",
    "TemplateSyntaxError",
    "ToolDefinitionError",
    "UndefinedVariableError",
    "__version__",
    "action",
    "audio",
    "compare",
    "compile_template",
    "complete",
    "complete_async",
    "complete_incremental_async",
    "diff",
    "document",
    "headless",
    "image",
    "load_ipython_extension",
    "map",
    "mcp",
    "offline_model",
    "openai_compatible",
    "readonly",
    "record",
    "replay",
    "resolve_model",
    "show",
    "start_run",
    "static_transcript",
    "stop_all",
    "stream",
    "table",
    "tool",
    "unload_ipython_extension",
]

if TYPE_CHECKING:
    from .actions import action
    from .batch import Comparison, compare, map
    from .engine import complete, complete_async, complete_incremental_async, stream
    from .errors import (
        AgentcellError,
        BudgetExhausted,
        EventLoopRunning,
        ForkError,
        Halted,
        McpServerError,
        ModelConfigError,
        NoEventLoop,
        ProviderError,
        ReplayDivergence,
        RunError,
        TemplateRenderError,
        TemplateSyntaxError,
        ToolDefinitionError,
        UndefinedVariableError,
    )
    from .frontends.handle import RunHandle
    from .frontends.jupyter.audience import headless
    from .frontends.show import show, start_run, stop_all
    from .frontends.widget.widget import AgentWidget
    from .mcp_servers import mcp
    from .options import ApprovalDecision, Compaction, RunOptions
    from .providers import RetryPolicy, openai_compatible, replay
    from .providers.credentials import LLM, LLMCredentials
    from .providers.models import offline_model, record, resolve_model
    from .render.diff import diff
    from .render.output import StaticTranscript, static_transcript
    from .result import RunResult
    from .template import compile_template
    from .tools import readonly, tool


def _show_batches_in_notebooks() -> None:
    """In a notebook kernel, a `map(...)` / `compare(..., over=rows)` batch shown as a cell's value is its live view,
    without `%load_ext` (`frontends/jupyter/batch_display.py`; registers by name, imports nothing heavy)."""
    from .frontends.jupyter.batch_display import register_in_kernel

    register_in_kernel()


_show_batches_in_notebooks()


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentcell' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext agentcell`: register `%%agent` / `%agent`."""
    from .frontends.jupyter.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext agentcell`: stop every run and remove the input transformer."""
    from .frontends.jupyter.magics import unload

    unload(ipython)
