"""Markdown answers as safe HTML for the saved (static) transcript: markdown-it-py, raw HTML off.

The live widget renders answers with marked + DOMPurify; a saved notebook read without a kernel
gets the same headings, lists, code blocks and tables from markdown-it-py (CommonMark + tables +
strikethrough). Raw HTML in the text stays text (`html=False`), link schemes are those markdown-it
allows (no `javascript:`, `vbscript:`, `file:` or non-image `data:`), links open without an opener,
and images become links: a saved notebook never loads anything from the network by itself.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict


def _link_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    rendered: str = self.renderToken(tokens, idx, options, env)
    return rendered


def _heading_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # An answer's headings are not the notebook's: JupyterLab's table of contents skips `jp-toc-ignore`
    # headings, where it would otherwise list, number and render an entry for each (seconds of main-thread
    # work for the 640 headings of a 50,000-token answer of `bench/browser.py`).
    tokens[idx].attrSet("class", "jp-toc-ignore")
    rendered: str = self.renderToken(tokens, idx, options, env)
    return rendered


def _image(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    src = html.escape(str(token.attrGet("src") or ""), quote=True)
    alt = html.escape(token.content or "image", quote=True)
    return f'<a href="{src}" rel="noopener noreferrer nofollow">[image: {alt}]</a>'


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    md.add_render_rule("heading_open", _heading_open)
    return md


def markdown_html(text: str) -> str:
    """`text` rendered as Markdown; anything that is not Markdown stays escaped text."""
    rendered: str = _parser().render(text)
    return rendered


def blocks_end(text: str, limit: int) -> int:
    """Where the top-level Markdown blocks of `text[:limit]` end, without the last one (the cut at `limit`
    may have split it): a prefix of `text` that renders on its own as it does within the whole text."""
    prefix = text[:limit]
    starts = [t.map[0] for t in _parser().parse(prefix) if t.level == 0 and t.map is not None and t.nesting >= 0]
    if len(starts) < 2:
        return 0
    offset = 0
    for _ in range(starts[-1]):
        offset = prefix.index("\n", offset) + 1
    return offset
