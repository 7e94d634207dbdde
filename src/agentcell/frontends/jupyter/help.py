"""What `%agent`, `%agent help` and `%agent?` say: every subcommand with one line each.

One table owns the subcommands' names, usages and summaries; the line magic's dispatch, its
docstring (`%agent?`) and the unknown-command message read it, so they cannot disagree.
"""

from __future__ import annotations

SUBCOMMANDS: tuple[tuple[str, str, str], ...] = (
    ("help", "%agent help", "this list"),
    ("config", "%agent config [key=value …]",
     "show or set the defaults: model, max_iter, max_calls, max_tokens, approve, interrupt_stops_runs"),
    ("tools", "%agent tools [NAME …]", "the tools the model will see: description, JSON schema, policy"),
    ("stop", "%agent stop [all | NAME]", "stop every background run, or one by its -o name or run id"),
    ("show", "%agent show NAME | RUN_ID", "show a run's widget again, or rebuild a run from its journal"),
    ("export", "%agent export NAME PATH",
     "write a finished run: PATH.json (the run), .openai.json (OpenAI messages), .html (a lesson)"),
    ("journal", "%agent journal [list] | clean [all | DAYS]", "list the journaled runs, or remove old ones"),
    ("fork", "%agent fork NAME --round N [--result TOOL=VALUE …]",
     "re-run a finished run from round N with an edited tool result or message (shown below)"),
    ("mcp", "%agent mcp [stop [NAME]]", "the MCP servers this kernel has running, their tools and state; or stop them"),
)
"""(name, usage, one line) of every `%agent` subcommand, in the order `%agent help` lists them."""

NAMES = tuple(name for name, _, _ in SUBCOMMANDS)


def help_text(model: str | None = None) -> str:
    """The listing: the cell magic first, then each subcommand on one line (and the model in use, if given)."""
    rows = [("%%agent [options]", "run the cell's template as a live agent (%%agent? lists the options)")]
    rows += [(usage, line) for _, usage, line in SUBCOMMANDS]
    width = max(len(usage) for usage, _ in rows)
    lines = [f"  {usage.ljust(width)}  {line}" for usage, line in rows]
    head = "agentcell's magics:"
    tail = [f"The next %%agent cell without -m uses: {model}."] if model else []
    return "\n".join([head, *lines, *tail])
