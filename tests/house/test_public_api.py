"""The supported API is exactly `agentcell.__all__`; importing the package stays cheap."""

from __future__ import annotations

import subprocess
import sys

import agentcell

PUBLIC = [
    "AgentWidget", "AgentcellError", "ApprovalDecision", "BudgetExhausted", "Compaction", "EventLoopRunning",
    "Halted", "Comparison", "ForkError", "compare", "diff", "LLM", "LLMCredentials", "McpServerError", "ModelConfigError", "NoEventLoop", "ProviderError", "ReplayDivergence",
    "RetryPolicy", "RunError", "RunHandle", "RunOptions", "RunResult", "StaticTranscript",
    "TemplateRenderError", "TemplateSyntaxError", "ToolDefinitionError", "UndefinedVariableError",
    "__version__", "action", "compile_template", "complete", "complete_async", "complete_incremental_async",
    "load_ipython_extension", "map", "mcp", "offline_model", "openai_compatible", "readonly", "record", "replay",
    "resolve_model", "show", "start_run", "static_transcript", "stop_all", "stream", "tool",
    "unload_ipython_extension",
    "MediaError", "image", "document", "audio", "table",
    "headless",
]


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert sorted(agentcell.__all__) == sorted(PUBLIC)
    for name in agentcell.__all__:
        assert getattr(agentcell, name) is not None


def test_errors_form_one_tree() -> None:
    errors = [getattr(agentcell, n) for n in PUBLIC if n.endswith(("Error", "Halted", "Exhausted", "Divergence",
                                                                     "Running", "Loop"))]
    assert all(issubclass(e, agentcell.AgentcellError) for e in errors)


def test_import_does_not_load_pydantic_ai_or_widgets() -> None:
    code = "import sys, agentcell; print(sorted(m for m in ('pydantic_ai', 'anywidget', 'jinja2') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_load_ext_does_not_load_pydantic_ai_or_widgets() -> None:
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'agentcell')\n"
        "print(sorted(m for m in ('pydantic_ai', 'anywidget', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
