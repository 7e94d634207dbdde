"""A run (or several) as one standalone HTML lesson: `%agent export NAME [NAME…] lesson.html`.

The file is the whole lesson with nothing to fetch: each run as the learner saw it (the static view)
followed by its teaching view (offered tools, the loop in three lanes, the markers, the wire), with
every stylesheet inline and one small inline script (Copy buttons, and opening every fold before
printing). It follows the reader's light or dark preference and prints cleanly (a print stylesheet:
no sticky headers, folds opened, rounds kept on one page where they fit).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._version import __version__
from ..transcript import Transcript
from .html import transcript_html
from .teaching.view import teaching_css, teaching_html

_PAGE_CSS = """
:root{color-scheme:light dark;--jp-ui-font-color1:#1f2328;--jp-ui-font-color2:#4d5661;--jp-layout-color1:#fff;
 --jp-layout-color2:#f2f4f7;--jp-border-color1:#8c959f;--jp-border-color2:#d0d7de;--jp-brand-color0:#0b4a9e;
 --jp-brand-color1:#1565c0;--jp-warn-color1:#d9730d;--jp-error-color0:#a31515;--jp-error-color1:#d32f2f}
@media (prefers-color-scheme: dark){:root{--jp-ui-font-color1:#e6edf3;--jp-ui-font-color2:#b1bac4;
 --jp-layout-color1:#0d1117;--jp-layout-color2:#161b22;--jp-border-color1:#6e7681;--jp-border-color2:#30363d;
 --jp-brand-color0:#79b8ff;--jp-brand-color1:#388bfd;--jp-warn-color1:#d29922;--jp-error-color0:#ff7b72;
 --jp-error-color1:#f85149}.ac-lessonroot{--acl-warn-text:#e3b341}}
body{margin:0 auto;max-width:72rem;padding:1rem 1.5rem;font:15px/1.45 system-ui,sans-serif;
 color:var(--jp-ui-font-color1);background:var(--jp-layout-color1)}
h1{font-size:1.5rem;margin:.2em 0}
h2{font-size:1.2rem;margin:1.4em 0 .4em;border-bottom:2px solid var(--jp-border-color1)}
.ac-lesson-meta{color:var(--jp-ui-font-color2)}
.agentcell-btn{font:inherit;color:inherit;background:var(--jp-layout-color2);border:1px solid var(--jp-border-color1);
 border-radius:3px;padding:0 .5em;cursor:pointer}
pre{white-space:pre-wrap;overflow-wrap:anywhere}
@media print{
 body{max-width:none;padding:0;font-size:11pt;color:#000;background:#fff}
 .ac-lane-heads{position:static}.ac-copy{display:none}
 .ac-text,.ac-wire-json,.agentcell-static pre{max-height:none!important;overflow:visible!important}
 .ac-step,.ac-marker,.ac-bubble,.ac-run{break-inside:avoid}
 .ac-lesson-run{break-before:page}.ac-lesson-run:first-of-type{break-before:auto}
}
"""

_SCRIPT = """
document.addEventListener("click", async (ev) => {
  const btn = ev.target.closest(".ac-copy");
  if (!btn) return;
  const pre = btn.closest(".ac-wire-block").querySelector("pre");
  try { await navigator.clipboard.writeText(pre.textContent); btn.textContent = "Copied"; }
  catch { getSelection().selectAllChildren(pre); btn.textContent = "Selected: press Ctrl+C"; }
});
let closed = [];
addEventListener("beforeprint", () => {
  closed = [...document.querySelectorAll("details:not([open])")];
  for (const d of closed) d.open = true;
});
addEventListener("afterprint", () => { for (const d of closed) d.open = false; closed = []; });
"""


def transcript_of(run: Any) -> Transcript:
    """The `Transcript` of a `RunHandle`, `show()`'s widget, a `RunResult` (from its journal) or a transcript."""
    if isinstance(run, Transcript):
        return run
    view = getattr(run, "widget", None) if not hasattr(run, "wire_snapshot") else run
    if view is not None and hasattr(view, "wire_snapshot"):
        return Transcript.from_wire(view.final or view.wire_snapshot())
    live = getattr(run, "transcript", None)
    if isinstance(live, Transcript):
        return live
    from ..journal import load

    return load(str(run.run_id)).transcript()


def lesson_html(runs: Sequence[tuple[str, Transcript]], *, title: str = "agentcell lesson") -> str:
    """Standalone HTML of `runs` (name, transcript): no external resource, prints cleanly."""
    sections = []
    for name, tr in runs:
        sections.append(
            f'<section class="ac-lesson-run" aria-label="run {html.escape(name)}"><h2>{html.escape(name)}</h2>'
            f'<h3>What the learner saw</h3>{transcript_html(tr, alone=True, teaching=False)}'
            f"<h3>Teaching view</h3>{teaching_html(tr, copy=True)}</section>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{teaching_css()}{_PAGE_CSS}</style></head>"
        f'<body class="ac-lessonroot"><h1>{html.escape(title)}</h1><p class="ac-lesson-meta">'
        f"Exported by agentcell {html.escape(__version__)}: {len(runs)} run{'s' if len(runs) != 1 else ''}; "
        "open the folds (the wire, the earlier messages, each marker's why?) to teach from it.</p>"
        + "".join(sections) + f"<script>{_SCRIPT}</script></body></html>\n"
    )


def export_lesson(path: str | Path, *runs: tuple[str, Any], title: str | None = None) -> Path:
    """Write the lesson of `runs` ((name, run) pairs: handles, widgets, results or transcripts) to `path`."""
    out = Path(path).expanduser()
    pairs = [(name, transcript_of(run)) for name, run in runs]
    out.write_text(lesson_html(pairs, title=title or f"agentcell lesson: {', '.join(n for n, _ in runs)}"),
                   encoding="utf-8")
    return out
