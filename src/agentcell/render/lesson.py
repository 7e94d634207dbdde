"""A run (or several) as one standalone HTML lesson: `%agent export NAME [NAME…] lesson.html`.

The file is the whole lesson with nothing to fetch: a table of contents when it holds several runs; per
run the cell that produced it (template, flags, the values `{{ }}` took; `cell_source.py`), the run as the
learner saw it (the static view), its timeline (`timeline.py`), the guesses made at its pauses, and its
teaching view (offered tools, the loop in three lanes, the markers, the wire), with
every stylesheet inline and one small inline script (Copy buttons, and opening every fold before
printing). It follows the reader's light or dark preference and prints cleanly (a print stylesheet:
no sticky headers, folds opened, rounds kept on one page where they fit).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._version import __version__
from ..transcript import Transcript
from .cell_source import CellSource, recalled, source_html
from .html import transcript_html
from .teaching.view import teaching_css, teaching_html
from .timeline import format_elapsed, lesson_css, timeline, timeline_html

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
.ac-lesson-toc ol{padding-left:1.4em}.ac-predictions li[data-right="false"]{color:var(--jp-error-color0)}
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


@dataclass(frozen=True, slots=True, kw_only=True)
class LessonRun:
    """One run of a lesson: its name, its transcript, and when known the cell and the events (with times)."""

    name: str
    transcript: Transcript
    source: CellSource | None = None
    events: tuple[Mapping[str, Any], ...] | None = None
    """The run's wire events (each with `t`): its timeline and predictions; `None` for a run read from its journal."""


def events_of(run: Any) -> tuple[Mapping[str, Any], ...] | None:
    """The wire events of a `RunHandle` or a widget (with their times), `None` when only a transcript is at hand."""
    view = run if hasattr(run, "wire_snapshot") else getattr(run, "widget", None)
    if view is not None and hasattr(view, "wire_snapshot"):
        return tuple(view.final or view.wire_snapshot())
    log = getattr(getattr(run, "run", None), "log", None)
    if log is None or not hasattr(log, "time"):
        return None
    from ..events.json import to_wire

    return tuple(to_wire(event, t=log.time(index)) for index, event in enumerate(log.events))


def source_of(run: Any) -> CellSource | None:
    """The cell that produced `run`: its handle's, or the one remembered for its run id."""
    source = getattr(run, "source", None)
    if isinstance(source, CellSource):
        return source
    return recalled(getattr(run, "run_id", None))


def lesson_run(name: str, run: Any) -> LessonRun:
    """A handle, a widget, a `RunResult` or a transcript as one run of a lesson."""
    return LessonRun(name=name, transcript=transcript_of(run), source=source_of(run), events=events_of(run))


def _predictions_html(events: Sequence[Mapping[str, Any]]) -> str:
    guesses = [ev for ev in events if ev.get("kind") == "prediction"]
    if not guesses:
        return ""

    def said(d: Any) -> str:
        d = d if isinstance(d, Mapping) else {}
        does, tool = str(d.get("does")), d.get("tool") or "a tool"
        return {"answer": "answer", "tool": f"call {tool}", "both": f"say something and call {tool}"}.get(does, does)

    items = "".join(
        f'<li data-right="{str(bool(ev.get("right"))).lower()}">request {html.escape(str(ev.get("round")))}: '
        f"guessed “{html.escape(said(ev.get('guess')))}”; the model chose to {html.escape(said(ev.get('actual')))} — "
        f"<strong>{'right' if ev.get('right') else 'wrong'}</strong></li>"
        for ev in guesses
    )
    right = sum(1 for ev in guesses if ev.get("right"))
    return (f'<section class="ac-predictions" aria-label="predictions"><h3>Predictions ({right} of {len(guesses)} '
            f"right)</h3><ol>{items}</ol></section>")


def _anchor(index: int, name: str) -> str:
    return f"run-{index + 1}-" + "".join(ch if ch.isalnum() else "-" for ch in name)[:40]


def _toc(runs: Sequence[LessonRun]) -> str:
    if len(runs) < 2:
        return ""
    items = "".join(
        f'<li><a href="#{_anchor(i, r.name)}">{html.escape(r.name)}</a> — {html.escape(str(r.transcript.status))}, '
        f"{html.escape(format_elapsed(r.transcript.elapsed))}</li>"
        for i, r in enumerate(runs)
    )
    return f'<nav class="ac-lesson-toc" aria-label="contents"><h2>Contents</h2><ol>{items}</ol></nav>'


def lesson_html(runs: Sequence[tuple[str, Transcript] | LessonRun], *, title: str = "agentcell lesson") -> str:
    """Standalone HTML of `runs` ((name, transcript) or `LessonRun`): no external resource, prints cleanly."""
    lesson = [r if isinstance(r, LessonRun) else LessonRun(name=r[0], transcript=r[1]) for r in runs]
    sections = []
    for index, run in enumerate(lesson):
        tr, name = run.transcript, run.name
        events = run.events or ()
        sections.append(
            f'<section class="ac-lesson-run" id="{_anchor(index, name)}" aria-label="run {html.escape(name)}">'
            f"<h2>{html.escape(name)}</h2>"
            + (source_html(run.source) if run.source is not None else "")
            + f'<h3>What the learner saw</h3>{transcript_html(tr, alone=True, teaching=False)}'
            + timeline_html(timeline(events)) + _predictions_html(events)
            + f"<h3>Teaching view</h3>{teaching_html(tr, copy=True)}</section>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{teaching_css()}{lesson_css()}{_PAGE_CSS}</style></head>"
        f'<body class="ac-lessonroot"><h1>{html.escape(title)}</h1><p class="ac-lesson-meta">'
        f"Exported by agentcell {html.escape(__version__)}: {len(lesson)} run{'s' if len(lesson) != 1 else ''}; "
        "open the folds (the wire, the earlier messages, each marker's why?) to teach from it.</p>"
        + _toc(lesson) + "".join(sections) + f"<script>{_SCRIPT}</script></body></html>\n"
    )


def export_lesson(path: str | Path, *runs: tuple[str, Any], title: str | None = None) -> Path:
    """Write the lesson of `runs` ((name, run) pairs: handles, widgets, results or transcripts) to `path`."""
    out = Path(path).expanduser()
    lesson = [lesson_run(name, run) for name, run in runs]
    out.write_text(lesson_html(lesson, title=title or f"agentcell lesson: {', '.join(n for n, _ in runs)}"),
                   encoding="utf-8")
    return out
