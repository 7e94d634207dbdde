"""The saved transcript renders answers as Markdown up to `MARKDOWN_BUDGET` characters, and the rest of a
longer answer verbatim as escaped plain text (JupyterLab re-reads every HTML output with its sanitizer in
one task; see static_view.MARKDOWN_BUDGET). Nothing of the answer is lost."""

from __future__ import annotations

import html
import re
from typing import Any

from agentcell.static_markdown import blocks_end, markdown_html
from agentcell.static_view import MARKDOWN_BUDGET, render_html, render_text

R = "budget"


def _events(*answers: str) -> list[dict[str, Any]]:
    slots = [{"name": f"s{i}", "type": "text"} for i in range(len(answers))]
    out: list[dict[str, Any]] = [{"kind": "run_started", "run_id": R, "model": "m", "slots": slots, "t": 0}]
    for i, text in enumerate(answers):
        out += [
            {"kind": "slot_started", "run_id": R, "slot": f"s{i}", "slot_type": "text", "index": i, "t": 0.1},
            {"kind": "token_delta", "run_id": R, "slot": f"s{i}", "text": text, "round": 1, "t": 0.2},
            {"kind": "slot_completed", "run_id": R, "slot": f"s{i}", "value": text, "t": 0.3},
        ]
    out.append({"kind": "processing_complete", "run_id": R, "status": "completed", "t": 0.4})
    return out


def _section(i: int) -> str:
    return (f"## Part {i}\n\nSome *text* <b>{i}</b> & more.\n\n- one\n- two\n\n"
            f"```python\ndef f_{i}():\n    return {i}\n\n    # a blank line inside the fence\n```\n\n")


def _plain(markup: str) -> str:
    match = re.search(r'<div class="ac-plain">(.*?)</div>', markup, flags=re.S)
    assert match is not None
    return html.unescape(match.group(1))


def test_a_short_answer_is_all_markdown() -> None:
    markup = render_html(_events(_section(1)))
    assert "<h2" in markup and 'class="ac-plain"' not in markup


def test_a_long_answer_is_markdown_up_to_the_budget_then_plain_text_and_nothing_is_lost() -> None:
    text = "".join(_section(i) for i in range(2 * MARKDOWN_BUDGET // len(_section(0))))
    assert len(text) > 1.5 * MARKDOWN_BUDGET
    markup = render_html(_events(text))
    rendered = markup.count("<h2")
    assert 0 < rendered < text.count("## Part")
    rest = _plain(markup)
    cut = len(text) - len(rest)
    assert text[cut:] == rest and cut <= MARKDOWN_BUDGET  # the rest, verbatim, after the rendered prefix
    assert text[:cut].count("```") % 2 == 0 and text[cut:].startswith(("## Part", "Some", "- one", "```"))
    assert "<b>" not in rest or "&lt;b&gt;" in markup  # the plain part is escaped text
    assert f"{len(rest):,} characters" in markup
    assert text in render_text(_events(text))  # the plain-text twin keeps the whole answer


def test_the_budget_is_shared_by_the_slots() -> None:
    long = "".join(_section(i) for i in range(MARKDOWN_BUDGET // len(_section(0)) + 5))
    markup = render_html(_events(long, _section(7)))
    assert markup.count('class="ac-plain"') == 2  # the first slot used the budget up; the second is plain


def test_blocks_end_never_splits_a_block() -> None:
    text = "".join(_section(i) for i in range(20))
    for limit in range(0, len(text), 37):
        cut = blocks_end(text, limit)
        assert cut <= limit and text[:cut].count("```") % 2 == 0
        assert cut == 0 or text[cut:].startswith(("## Part", "Some", "- one", "```"))
        assert markdown_html(text[:cut]) + markdown_html(text[cut:]) == markdown_html(text)
