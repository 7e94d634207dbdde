"""A finished run as static HTML and plain text, for notebooks read without a kernel.

The widget needs a kernel (or saved widget state) to show anything. Once a run ends, its output is
updated with this rendering next to the widget view, so nbconvert's HTML, GitHub-style renderers
and JupyterLab on an untrusted notebook still show the transcript: slots, rounds, thinking,
narration, tool calls with their arguments and results, approvals, warnings, resume segments,
compaction markers and the answer — Markdown rendered, as the live view does.

It reads the one `Transcript` (the same reducer the widget's `js/src/state.js` is pinned to), with the
labels of `labels.json`. Every piece of text is escaped (`html.escape`) or goes through
markdown-it-py with raw HTML off (`static_markdown.py`): model and tool text never becomes scripts,
styles or event handlers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..labels import label, status_label
from ..transcript import Slot, Transcript, is_text_type
from ..usage import Usage, format_cost
from .items import as_json, e, item_html, item_line, pre
from .markdown import blocks_end, markdown_html
from .teaching.view import saved_teaching, teaching_css

MIME_HTML = "text/html"
MIME_PLAIN = "text/plain"
UNFINISHED = "still running when this output was saved"
MARKDOWN_BUDGET = 30_000
"""Characters of answer text per transcript rendered as Markdown; the rest of a longer answer is kept verbatim
as plain text (still all there). JupyterLab reads every HTML output of a cell
again with its sanitizer, in one task, whenever the cell's outputs change (its table of contents), and renders
it: for the 50,000-token answer of `bench/browser.py` rendered as Markdown (381 KB of markup) the sanitizer
alone took 81–300 ms, for the same text as plain text 5–16 ms."""
PLAIN_NOTE = "The rest of this answer ({n:,} characters) is shown as plain text in the saved view."
TEXT_BUDGET = 30_000
"""Characters of answer text per transcript in a saved output's `text/plain`; a longer answer is cut there, with a
note, and kept whole in the same output's HTML. The plain text is the fallback of readers that show no HTML, and
every byte of it costs JupyterLab at the run's end: it decodes the output update, copies it into the notebook's
shared model and keeps it, in one task. For the 50,000-token answer of `bench/browser.py` the full plain text was
267 KB of a 589 KB update. `%agent show` prints the whole transcript (no budget)."""
TEXT_CUT_NOTE = "[… {n:,} more characters of this answer: the HTML of this output holds all of it]"
NO_MATH = "ac-body tex2jax_ignore mathjax_ignore"
"""The class of the transcript's body: JupyterLab and nbconvert's pages typeset HTML outputs with MathJax, which
would turn an answer's "$5 and $10" into math the live view never shows (it renders no math), and would scan all
of a long answer's text at the run's end to find none."""

# Scoped to the rendering; JupyterLab's theme variables with neutral fallbacks. Renderers that strip
# <style> (GitHub, sanitizers) still get readable semantic HTML. The first rule hides the widget
# output just before this one when it holds no rendered view (JupyterLab without a kernel shows
# "Loading widget..." there; nbconvert without the widget CDNs shows nothing); a transcript shown on
# its own (`data-alone`, `static_transcript()`) hides nothing. A live view marks its output with
# `data-agentcell-view` (js/src/view/host.js): no `:has(.agentcell)`, which would visit the whole view
# (a long answer's every element) each time the browser checks it, and only child combinators
# inside `:has()` (JupyterLab and nbconvert put an HTML output's markup right in
# `.jp-OutputArea-output`). Outside JupyterLab the fallbacks
# inherit the page's colours, so marimo's dark theme and nbconvert's light page both read well.
_CSS = """
.jp-OutputArea-child:not([data-agentcell-view]):has(+ .jp-OutputArea-child > .jp-OutputArea-output >
 .agentcell-static:not(:empty):not([data-alone])){display:none}
.agentcell-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;
 color:var(--jp-ui-font-color1,inherit);border:1px solid var(--jp-border-color2,rgba(128,128,128,.4));
 border-radius:6px;padding:8px 12px;max-width:100%;overflow-wrap:anywhere}
.agentcell-static pre{white-space:pre-wrap;margin:4px 0;padding:6px 8px;max-height:24em;overflow:auto;
 background:var(--jp-layout-color2,rgba(128,128,128,.12));border-radius:4px;font-size:12px}
.agentcell-static .ac-head{margin:0 0 6px 0;color:var(--jp-ui-font-color2,inherit)}
.agentcell-static .ac-slot{margin:8px 0 0 0;border-top:1px solid var(--jp-border-color2,rgba(128,128,128,.3));
 padding-top:6px}
.agentcell-static .ac-muted,.agentcell-static .ac-thinking{color:var(--jp-ui-font-color2,inherit)}
.agentcell-static .ac-narration{color:var(--jp-ui-font-color2,inherit);border-left:3px solid
 var(--jp-border-color1,rgba(128,128,128,.5));margin:4px 0;padding-left:8px}
.agentcell-static .ac-tool{border:1px solid var(--jp-border-color2,rgba(128,128,128,.35));border-radius:4px;
 margin:4px 0;padding:4px 8px}
.agentcell-static .ac-error{color:var(--jp-error-color1,#d32f2f)}
.agentcell-static .ac-answer{margin-top:6px}
.agentcell-static .ac-answer p{margin:4px 0}
.agentcell-static .ac-answer pre{white-space:pre}
.agentcell-static .ac-plain{white-space:pre-wrap}
.agentcell-static .ac-answer table{border-collapse:collapse}
.agentcell-static .ac-answer th,.agentcell-static .ac-answer td{border:1px solid
 var(--jp-border-color2,rgba(128,128,128,.4));
 padding:2px 6px}
.agentcell-static .ac-round-label{color:var(--jp-ui-font-color2,inherit);font-size:12px;margin-top:4px}
.agentcell-static .ac-slot-name{margin:0}
"""




def _usage_text(usage: Usage) -> str:
    def n(count: Any, noun: str) -> str:
        return f"{count} {noun}" + ("" if count == 1 else "s")

    mark = "~" if usage.estimated else ""  # counted here: the provider reported no usage
    parts = [n(usage.requests, "request"), n(usage.tool_calls, "tool call"),
             f"tokens {mark}{usage.input_tokens:,} in / {mark}{usage.output_tokens:,} out"]
    if usage.requests:  # the cost with meaningful digits ($0.0000045); "—" when the price is unknown, never $0.00
        parts.append(f"cost {format_cost(usage.cost)}")
    return " · ".join(parts)


def _slot_status(slot: Slot) -> str:
    if slot.type == "halt":
        return label("guard_status", status=status_label(slot.status))
    text = status_label(slot.status)
    return label("kept_slot", status=text) if slot.kept else text


def _shown_error(slot: Slot) -> str | None:
    """The slot's error, except a deliberate Stop's: its status already says "stopped" (no "error: stopped")."""
    return None if slot.status == "stopped" and slot.error == "stopped" else slot.error


def _typed(slot: Slot) -> bool:
    return slot.has_value and not is_text_type(slot.type)


class _Budget:
    """What is left of a budget of answer characters while a transcript is rendered (answers in slot order)."""

    def __init__(self, chars: int) -> None:
        self.left = chars


def _answer_html(text: str, budget: _Budget) -> str:
    if len(text) <= budget.left:
        budget.left -= len(text)
        return markdown_html(text)
    cut = blocks_end(text, budget.left)
    budget.left = 0
    rest = text[cut:]
    note = f'<div class="ac-muted"><em>{e(PLAIN_NOTE.format(n=len(rest)))}</em></div>'
    return f'{markdown_html(text[:cut]) if cut else ""}{note}<div class="ac-plain">{e(rest)}</div>'


def _cut_answer(text: str, budget: _Budget) -> str:
    if len(text) <= budget.left:
        budget.left -= len(text)
        return text
    cut = text.rfind("\n", 0, budget.left + 1) if budget.left else 0
    cut = cut if cut > budget.left // 2 else budget.left  # at a line's end when one is near, else mid-line
    budget.left = 0
    return text[:cut] + ("\n" if cut else "") + TEXT_CUT_NOTE.format(n=len(text) - cut)


def _slot_html(slot: Slot, *, ended: bool, budget: _Budget) -> str:
    out = [f'<section class="ac-slot" data-slot="{e(slot.name)}" data-status="{e(slot.status)}">'
           f'<p class="ac-slot-name"><strong>{e(slot.name)}</strong> <span class="ac-muted">{e(slot.type)} · '
           f"{e(_slot_status(slot))}</span></p>"]  # a paragraph, not a heading: it reads as a label unstyled
    for r in sorted(slot.rounds):
        shown = [html for html in (item_html(it, ended=ended) for it in slot.rounds[r].items) if html]
        if shown:
            rnd = f'<div class="ac-round-label">{e(label("round", round=r))}</div>' if len(slot.rounds) > 1 else ""
            out.append(f'<div class="ac-round" data-round="{r}">{rnd}{"".join(shown)}</div>')
    if _typed(slot):
        out.append(f'<div class="ac-answer">{pre(as_json(slot.value))}</div>')
    elif slot.answer():
        partial = ""
        if slot.answer_stopped or not slot.has_value:
            note = (label("partial_answer_stopped") if slot.status == "stopped"  # the status above says it once
                    else label("partial_answer", status=status_label(slot.status)))
            partial = f'<div class="ac-muted"><em>{e(note)}</em></div>'
        out.append(f'<div class="ac-answer">{_answer_html(slot.answer(), budget)}{partial}</div>')
    if _shown_error(slot):
        out.append(f'<div class="ac-error">{e(slot.error)}</div>')
    out.append("</section>")
    return "".join(out)


def transcript_html(
    tr: Transcript, provenance: Mapping[str, Any] | None = None, *, alone: bool = False, teaching: bool = True
) -> str:
    """The whole run as self-contained HTML (a `<style>` block plus semantic markup).

    `alone`: shown on its own rather than as the widget's twin (it then never hides the output before it).
    `teaching`: include the folded teaching view (the lesson export shows it on its own instead).
    """
    model = tr.model or str((provenance or {}).get("model", ""))
    head = [f"<strong>%%agent</strong> · model <code>{e(model or '?')}</code>"]
    if tr.offline:
        head.append(e(label("offline_chosen" if tr.offline_chosen else "offline")))
    head += [f"<strong>{e(status_label(tr.status))}</strong>", f"{tr.elapsed:.1f} s", e(_usage_text(tr.usage))]
    if not tr.ended:
        head.append(f"<em>{e(UNFINISHED)}</em>")
    marker = " data-alone" if alone else ""
    teach = saved_teaching(tr) if teaching else ""  # folded; on top, as on the widget (static_teaching.py)
    css = _CSS + (teaching_css() if teach else "")
    out = [f'<div class="agentcell-static" data-status="{e(tr.status)}"{marker}>', f"<style>{css}</style>",
           f'<div class="{NO_MATH}">', f'<div class="ac-head">{" · ".join(head)}</div>', teach]
    out += [item_html(item, ended=tr.ended) for item in tr.items]
    budget = _Budget(MARKDOWN_BUDGET)
    out += [_slot_html(slot, ended=tr.ended, budget=budget) for slot in tr.slots.values()]
    out.append("</div></div>")
    return "\n".join(out)


def transcript_text(
    tr: Transcript, provenance: Mapping[str, Any] | None = None, *, answer_chars: int | None = None
) -> str:
    """The run as plain text: header, tool calls and answers (the last-resort fallback).

    `answer_chars`: at most this many characters of answer text in all (`TEXT_BUDGET` for a saved output); the
    rest of a longer answer is replaced by a note saying how much follows. `None`: every answer whole.
    """
    budget = _Budget(answer_chars) if answer_chars is not None else None
    model = tr.model or str((provenance or {}).get("model", ""))
    lines = [f"%%agent · {model or '?'} · {status_label(tr.status)} · {tr.elapsed:.1f} s · {_usage_text(tr.usage)}"
             + ("" if tr.ended else f" · {UNFINISHED}")]
    lines += [line for line in (item_line(it) for it in tr.items) if line is not None]
    for slot in tr.slots.values():
        lines.append(f"\n[{slot.name}] ({slot.type}, {_slot_status(slot)})")
        for r in sorted(slot.rounds):
            lines += [line for line in (item_line(it) for it in slot.rounds[r].items) if line is not None]
        if _typed(slot):
            lines.append(as_json(slot.value))
        elif slot.answer():
            answer = slot.answer() if budget is None else _cut_answer(slot.answer(), budget)
            lines.append(answer + (" [partial]" if slot.answer_stopped or not slot.has_value else ""))
        if _shown_error(slot):
            lines.append(f"  error: {slot.error}")
    return "\n".join(lines)


def render_html(
    events: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any] | None = None, *, alone: bool = False
) -> str:
    """Wire events (the widget's final log) as the static HTML transcript."""
    return transcript_html(Transcript.from_wire(events), provenance, alone=alone)


def render_text(
    events: Iterable[Mapping[str, Any]], provenance: Mapping[str, Any] | None = None, *,
    answer_chars: int | None = None,
) -> str:
    """Wire events as the plain-text transcript (`answer_chars` as in `transcript_text`)."""
    return transcript_text(Transcript.from_wire(events), provenance, answer_chars=answer_chars)
