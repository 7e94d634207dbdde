"""`%agent export` of a run still going waits for it, as a top-level `await` (the way `--wait` does).

A line magic cannot be awaited, so an input transformer rewrites each `%agent export …` line of a cell into
`await <AgentMagics>.agent_export(…)` before IPython looks for magics (`blocking.py` does the same for
`%%agent --wait`). Under Run All the export cell then stays busy until the runs it names have ended, and
the kernel's loop is never blocked: the runs go on streaming meanwhile, and their Stop buttons still work
(a stopped run is exported as it stopped). An export of finished runs returns at once.
"""

from __future__ import annotations

import re

_EXPORT_LINE = re.compile(r"^%agent[ \t]+export\b(?P<rest>[^\n]*)$", re.ASCII)


def export_transformer(lines: list[str]) -> list[str]:
    """Rewrite every top-level `%agent export …` line into an awaited call; leave every other line alone."""
    if not any(line.startswith("%agent") for line in lines):
        return lines
    out = []
    for line in lines:
        match = _EXPORT_LINE.match(line.rstrip("\r\n"))
        if match is None:
            out.append(line)
            continue
        call = f"get_ipython().magics_manager.registry['AgentMagics'].agent_export({match.group('rest').strip()!r})"
        out.append(f"await {call}\n")
    return out


def install(ipython: object) -> None:
    cleanup = ipython.input_transformers_cleanup  # type: ignore[attr-defined]
    if export_transformer not in cleanup:
        cleanup.append(export_transformer)


def remove(ipython: object) -> None:
    cleanup = ipython.input_transformers_cleanup  # type: ignore[attr-defined]
    while export_transformer in cleanup:
        cleanup.remove(export_transformer)


def size_text(size: int) -> str:
    """A file size as people read it: `812 bytes`, `41.3 kB`, `2.1 MB`."""
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"
