"""The saved transcript renders answers as Markdown up to `MARKDOWN_BUDGET` characters, and the rest of a
longer answer verbatim as escaped plain text (JupyterLab re-reads every HTML output with its sanitizer in
one task; see static_view.MARKDOWN_BUDGET). Nothing of the answer is lost from the HTML. Its `text/plain`
keeps `TEXT_BUDGET` characters of answer text and says how many more the HTML holds."""

from __future__ import annotations

import html
import re
from typing import Any

from agentcell.render.html import MARKDOWN_BUDGET, NO_MATH, TEXT_BUDGET, render_html, render_text
from agentcell.render.markdown import blocks_end, markdown_html

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


def test_the_saved_plain_text_keeps_the_budget_of_a_long_answer_and_says_how_much_more_the_html_holds() -> None:
    text = "".join(_section(i) for i in range(2 * TEXT_BUDGET // len(_section(0))))
    events = _events(text)
    plain = render_text(events, answer_chars=TEXT_BUDGET)
    body = plain.split("\n[s0] (text, ", 1)[1].split("\n", 1)[1]
    kept, _, note = body.rpartition("\n")
    assert text.startswith(kept) and TEXT_BUDGET // 2 < len(kept) <= TEXT_BUDGET
    assert text[len(kept)] == "\n"  # cut at a line's end
    assert note == f"[… {len(text) - len(kept):,} more characters of this answer: the HTML of this output holds all of it]"
    markup = render_html(events)
    assert _plain(markup) == text[len(text) - len(_plain(markup)):]  # the HTML keeps the whole answer
    assert html.unescape(markup).count("## Part") + markup.count("<h2") >= text.count("## Part")
    assert text in render_text(events)  # no budget: whole (`%agent show`)


def test_the_plain_text_budget_is_shared_and_a_short_answer_is_whole() -> None:
    short = _section(3)
    assert short in render_text(_events(short), answer_chars=TEXT_BUDGET)
    line = "x" * 99 + "\n"
    plain = render_text(_events(line * (TEXT_BUDGET // 100 - 1), "tail " * 50), answer_chars=TEXT_BUDGET)
    assert (line * (TEXT_BUDGET // 100 - 1)) in plain  # the first slot fits under the budget
    assert "tail tail" in plain and "more characters of this answer" in plain  # the second is cut mid-line
    one_line = "y" * (TEXT_BUDGET + 10)
    plain = render_text(_events(one_line), answer_chars=TEXT_BUDGET)
    assert "y" * TEXT_BUDGET + "\n[… 10 more characters" in plain  # no line end near: cut at the budget


def test_the_transcript_body_is_kept_from_mathjax() -> None:
    markup = render_html(_events("It costs $5 and $10."))
    root, _, rest = markup.partition("\n<style>")
    assert root.startswith('<div class="agentcell-static" data-status="completed"')
    body = rest.split("</style>\n", 1)[1]
    assert body.startswith(f'<div class="{NO_MATH}">') and body.endswith("</div></div>")
    assert "$5 and $10" in markup
