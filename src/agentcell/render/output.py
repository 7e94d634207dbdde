"""A run as a static transcript object: what every front end keeps when it saves or exports a notebook.

The live widget needs a kernel to show anything; a reopened marimo notebook or `marimo export html`
keeps only an empty box for it. `static_transcript(run)` turns a run — `show()`'s widget, a
`RunHandle`, a `RunResult` (read back from its journal) or a `Transcript` — into a `StaticTranscript`:
the same HTML the Jupyter static view saves (`html.py`), offered as a rich-display mimebundle
(Jupyter, IPython, nbconvert, VS Code), as `_mime_` (marimo's own protocol) and as text (`print`).
A run still going gives its transcript so far, marked unfinished.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentcellError
from ..transcript import Transcript
from .html import MIME_HTML, MIME_PLAIN, render_html, render_text, transcript_html, transcript_text


@dataclass(frozen=True, slots=True, repr=False)
class StaticTranscript:
    """A run's transcript as HTML and text, displayed the same way by every front end."""

    html: str
    """Self-contained HTML (a scoped `<style>` and escaped markup; model text never becomes script)."""
    text: str
    """The plain-text transcript (terminals, `print`, renderers without HTML)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Provenance (run id, status, model, limits, usage), saved under `"agentcell"` in a Jupyter output."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        return {MIME_HTML: self.html, MIME_PLAIN: self.text}, ({"agentcell": dict(self.metadata)} if self.metadata
                                                                else {})

    def _repr_html_(self) -> str:
        return self.html

    def _mime_(self) -> tuple[str, str]:
        """marimo's display protocol."""
        return MIME_HTML, self.html

    def collapsed(self, summary: str) -> str:
        """The HTML inside a closed `<details>` whose summary line is `summary` (escaped)."""
        return (f'<details class="agentcell-saved"><summary>{html.escape(summary)}</summary>'
                f"{self.html}</details>")

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<StaticTranscript {self.text.splitlines()[0] if self.text else '(empty)'}>"


def static_transcript(run: Any, *, journal: str | None = None) -> StaticTranscript:
    """A run as a static transcript that saved and exported notebooks keep (see the module docstring).

    Args:
        run: `show()`'s widget (or marimo's `mo.ui.anywidget` around it), a `RunHandle`, a `RunResult`
            or a `Transcript`. A run still going gives its transcript so far, marked unfinished.
        journal: where a `RunResult`'s run was journaled, if not the default folder.

    Raises:
        AgentcellError: a `RunResult` whose journal cannot be found (the run used `journal=False`).
    """
    if isinstance(run, Transcript):
        return _of_transcript(run, {})
    if hasattr(run, "wire_snapshot") and hasattr(run, "final"):  # AgentWidget, or mo.ui.anywidget around one
        return _of_widget(run)
    view = getattr(run, "widget", None)
    if view is not None and hasattr(view, "wire_snapshot"):  # a RunHandle with a widget
        return _of_widget(view)
    live = getattr(run, "transcript", None)
    if isinstance(live, Transcript):  # a RunHandle without a widget (--quiet)
        return _of_transcript(live, {})
    if hasattr(run, "run_id") and hasattr(run, "messages"):  # a RunResult
        from ..journal import load

        try:
            record = load(str(run.run_id), path=journal)
        except AgentcellError as exc:
            raise AgentcellError(f"{exc}; show the run's widget or handle instead") from None
        return _of_transcript(record.transcript(), {"model": getattr(run, "model", "")})
    raise TypeError(f"static_transcript() takes show()'s widget, a RunHandle, a RunResult or a Transcript, "
                    f"not {type(run).__name__}")


def _of_widget(view: Any) -> StaticTranscript:
    if view.final:
        events, facts = view.final, dict(view.output_metadata)
    else:
        events, facts = view.wire_snapshot(), dict(view.provenance)
    return StaticTranscript(html=render_html(events, facts, alone=True), text=render_text(events, facts),
                            metadata=facts if view.final else {})


def _of_transcript(tr: Transcript, facts: Mapping[str, Any]) -> StaticTranscript:
    return StaticTranscript(html=transcript_html(tr, facts, alone=True), text=transcript_text(tr, facts))
