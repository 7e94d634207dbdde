"""MkDocs hook: the Performance page shows BENCHMARKS.md's summary table, read at build time.

BENCHMARKS.md (at the repository's root, outside the docs folder) is the one owner of every benchmark figure.
The docs page used to carry a copy of its table, which went stale the first time a figure moved. This hook
replaces the marker ``<!-- benchmarks-summary -->`` in ``performance.md`` with the table as it is now, minus the
links into BENCHMARKS.md's sections (they are anchors of that file, not of the site) and the commit column.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

MARKER = "<!-- benchmarks-summary -->"
_LINK = re.compile(r"\[([^\]]+)\]\(#[^)]*\)")


def summary_table(text: str) -> str:
    """The rows of the table under ``## Summary``, links to anchors kept as their text, commits dropped."""
    section = text.split("\n## Summary\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    if len(rows) < 3:
        raise ValueError("BENCHMARKS.md: no table under '## Summary'")
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    keep = [i for i, name in enumerate(header) if name != "Commit"]
    out = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        out.append("| " + " | ".join(_LINK.sub(r"\1", cells[i]) for i in keep if i < len(cells)) + " |")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    root = Path(config["config_file_path"]).parent
    return markdown.replace(MARKER, summary_table((root / "BENCHMARKS.md").read_text(encoding="utf-8")))
