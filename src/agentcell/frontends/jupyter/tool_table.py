"""`%agent tools` and `%agent stop` answers a person reads: tables and sentences, still plain values.

`ToolTable` is the dict of tool name → declaration that `%agent tools` always returned (code reads
it as before), shown as an HTML table in Jupyter and as aligned text in a terminal. `Stopped` is the
count `%agent stop` returned, shown as a sentence naming the runs it stopped.
"""

from __future__ import annotations

import html
import json
from typing import Any


def _signature(name: str, schema: dict[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    params = []
    for pname, prop in props.items():
        kind = prop.get("type") or ("enum" if "enum" in prop else "any")
        if "enum" in prop:
            kind = " | ".join(json.dumps(v) for v in prop["enum"])
        params.append(f"{pname}: {kind}" + ("" if pname in required else " = …"))
    return f"{name}({', '.join(params)})"


signature = _signature
"""A tool's call shape from its JSON schema, `name(a: string, b: integer = …)` (`%agent mcp` shows it too)."""


def _shown(name: str, entry: dict[str, Any]) -> str:
    """The signature, after the MCP server's name for a server's tool (`time: get_current_time(...)`)."""
    server = entry.get("server")
    shape = _signature(name, entry.get("parameters") or {})
    return f"{server}: {shape}" if server else shape


def _policy(entry: dict[str, Any]) -> str:
    if entry.get("hints") is not None:  # an MCP tool: its policy comes from the server's own hints
        hints = ", ".join(f"{k}={v}" for k, v in entry["hints"].items() if k.endswith("Hint")) or "no hints"
        return f"{'readonly' if entry.get('readonly') else 'may write'} ({hints})"
    return ", ".join(word for word, on in (("readonly", entry.get("readonly")), ("asks approval", entry.get("approve")))
                     if on) or "may write"


class ToolTable(dict[str, dict[str, Any]]):
    """Tool name → `{description, parameters, readonly, approve}`, as the model sees each tool."""

    def _repr_html_(self) -> str:
        rows = []
        for name, entry in self.items():
            schema = json.dumps(entry.get("parameters") or {}, indent=2, ensure_ascii=False)
            rows.append(
                f"<tr><td><code>{html.escape(_shown(name, entry))}</code></td>"
                f"<td>{html.escape(_policy(entry))}</td><td>{html.escape(entry.get('description') or '')}</td>"
                f"<td><details><summary>JSON schema</summary><pre>{html.escape(schema)}</pre></details></td></tr>"
            )
        head = "<tr><th>tool</th><th>policy</th><th>description (the model reads it)</th><th>parameters</th></tr>"
        if not rows:
            return "<p>No tools: decorate notebook functions with <code>@tool</code> or <code>@readonly</code>.</p>"
        return f'<table class="agentcell-tools">{head}{"".join(rows)}</table>'

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text())

    def text(self) -> str:
        """The table as plain text: signature and policy, the description, then the JSON schema."""
        if not self:
            return "No tools: decorate notebook functions with @tool or @readonly."
        blocks = []
        for name, entry in self.items():
            schema = json.dumps(entry.get("parameters") or {}, indent=2, ensure_ascii=False)
            blocks.append(f"{_shown(name, entry)}   [{_policy(entry)}]\n"
                          f"    {entry.get('description') or '(no description: add a docstring)'}\n"
                          + "\n".join("    " + line for line in schema.splitlines()))
        return "\n\n".join(blocks)


class Stopped(int):
    """How many runs `%agent stop` stopped (an `int`), displayed as a sentence naming them."""

    names: tuple[str, ...] = ()

    @classmethod
    def of(cls, names: list[str]) -> Stopped:
        out = cls(len(names))
        out.names = tuple(names)
        return out

    def sentence(self) -> str:
        if not self.names:
            return "No run was going; nothing to stop."
        return f"Stopped {len(self.names)} run{'s' if len(self.names) != 1 else ''}: {', '.join(self.names)}."

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.sentence())
