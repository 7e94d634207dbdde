"""The cheap way to check a text's Jinja and find the names it reads, used when it is provably exact.

Checking a text the full way (`jinja.compile_text`) parses it whole, generates its Python and
compiles that: most of a large cell's compile time. Most texts need much less. A text is cut into
its top-level *chunks*, each `{{ }}` and each outermost `{% if %}`/`{% for %}`/… block, and each
distinct chunk is parsed once per cell (a cell that repeats `{{ question }}` parses it once). The
answer stands only when it equals what the full way would find:

* no chunk can declare a name another one reads, and nothing can fail later, when Python compiles
  the generated code: there is no `{% set %}`, `{% macro %}`, `{% block %}`, `{% break %}`, …
  (only the words in `_OPENERS` and `_INNER`), and no tree is deeper than `MAX_DEPTH`;
* the text's Jinja source is its regions side by side (no data that Jinja would read as a region);
* every chunk parses, and every filter and test it names exists (Jinja checks those when it
  generates code, and so does `meta.find_undeclared_variables` for the chunks with blocks).

Otherwise the answer is `None`, and the caller takes the full way, which raises the exact error.
Either way the Python code is generated at the first render, not here.
"""

from __future__ import annotations

import functools
import re

import jinja2
import jinja2.nodes
from jinja2 import meta

from .nodes import Text

MAX_DEPTH = 24
"""Deeper syntax trees take the full way (it reports "nested too deeply" and deep recursion)."""

_OPENERS = frozenset({"if", "for", "with", "filter", "call", "autoescape"})
_INNER = frozenset({"elif", "else"})
_WORD = re.compile(r"\{%[-+]?\s*(\w*)")
_UNKNOWN = object()


class Analyzer:
    """Answers for the texts of one cell, with a cache of the chunks seen so far."""

    def __init__(self, env: jinja2.Environment) -> None:
        self.env = env
        # Names an expression reads that are not the context's: Jinja's globals, and `self`.
        self.not_free = _not_free(env)
        self.chunks: dict[str, frozenset[str] | None] = {}

    def variables(self, text: Text) -> frozenset[str] | None:
        """The names `text` reads from its context, or `None` when only the full way can tell."""
        chunks = _chunks(text)
        if chunks is None:
            return None
        names: set[str] = set()
        for chunk in chunks:
            found = self.chunks.get(chunk, _UNKNOWN)
            if found is _UNKNOWN:
                found = self.chunks[chunk] = self.chunk(chunk)
            if found is None:
                return None
            names.update(found)  # type: ignore[arg-type]  # not _UNKNOWN any more
        return frozenset(names)

    def chunk(self, source: str) -> frozenset[str] | None:
        simple = simple_names(source, self.env) if source.startswith("{{") else self.simple_block(source)
        if simple is not None:
            return simple
        try:
            tree = self.env.parse(source)
            read = self.walk(tree)
            if read is None:
                return None
            if source.startswith("{%"):
                scoped = _free(tree, frozenset())
                return scoped - self.not_free if scoped is not None else frozenset(meta.find_undeclared_variables(tree))
            return frozenset(read) - self.not_free
        except (jinja2.TemplateError, RecursionError, SyntaxError, MemoryError):
            return None

    def simple_block(self, source: str) -> frozenset[str] | None:
        """The names a block of plain `{% for a in b.c %}`, `{% if [not] a.b %}`/`elif`/`else` and
        `{{ a.b }}` reads, without parsing it; `None` for anything else. Such a block is always valid
        Jinja (the nesting is checked here, as Jinja's parser would), so nothing is lost."""
        names: set[str] = set()
        open_blocks: list[tuple[str, str, frozenset[str]]] = []  # (word, arm, names its arm binds)
        for match in _REGIONS.finditer(source):
            region = match.group()
            bound = frozenset().union(*(binds for _, _, binds in open_blocks))
            if region.startswith("{{"):
                read = _chain_head(_SIMPLE.fullmatch(region))
            else:
                tag = _SIMPLE_TAG.fullmatch(region)
                if tag is None or len(open_blocks) > MAX_SIMPLE_NESTING:
                    return None
                read = _step(tag, open_blocks)
            if read is None:
                return None
            if read and read not in bound and read not in self.not_free:
                names.add(read)
        return None if open_blocks else frozenset(names)

    def walk(self, tree: jinja2.nodes.Template) -> set[str] | None:
        """Every name `tree` mentions; `None` if it is too deep or names an unknown filter or test."""
        names: set[str] = set()
        filters, tests = self.env.filters, self.env.tests
        stack: list[tuple[jinja2.nodes.Node, int]] = [(tree, 1)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                return None
            if isinstance(node, jinja2.nodes.Name):
                names.add(node.name)
            elif isinstance(node, jinja2.nodes.Filter | jinja2.nodes.Test) and node.name not in (
                filters if isinstance(node, jinja2.nodes.Filter) else tests
            ):
                return None
            stack.extend((child, depth + 1) for child in node.iter_child_nodes())
        return names


@functools.cache
def _not_free(env: jinja2.Environment) -> frozenset[str]:
    return frozenset(env.globals) | {"self"}


def _chunks(text: Text) -> list[str] | None:
    """The top-level `{{ }}` regions and outermost blocks of `text`; `None` if it cannot be cut."""
    chunks: list[str] = []
    parts, last = text.parts, len(text.parts) - 1
    open_words: list[str] = []
    start = 0
    for index, part in enumerate(parts):
        kind, source = part.kind, part.source
        if kind == "data":
            # Data next to a region reads as more Jinja when `<!-- -->` was cut between them.
            if "{{" in source or "{%" in source or "{#" in source or (index < last and source.endswith("{")):
                return None
        elif kind == "variable" and not open_words:
            chunks.append(source)
        elif kind == "block":
            match = _WORD.match(source)
            word = match.group(1) if match else ""
            if word in _OPENERS:
                start = start if open_words else index
                open_words.append(word)
            elif word in _INNER and open_words:
                continue
            elif open_words and word == "end" + open_words[-1]:
                open_words.pop()
                if not open_words:
                    chunks.append("".join(part.source for part in parts[start : index + 1]))
            else:
                return None
    return None if open_words else chunks


_SIMPLE = re.compile(r"\{\{[-+]?\s*([A-Za-z_][A-Za-z0-9_]*)((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)\s*-?\}\}")
_JINJA_WORDS = frozenset(
    {"true", "false", "none", "True", "False", "None", "and", "or", "not", "in", "is", "if", "else", "recursive"}
)


MAX_SIMPLE_NESTING = 4
"""Deeper blocks take the full way (Python limits how deeply the generated code may nest)."""
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_CHAIN = rf"{_NAME}(?:\s*\.\s*{_NAME})*"
_REGIONS = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#", re.DOTALL)
_SIMPLE_TAG = re.compile(
    rf"\{{%[-+]?\s*(?:(?P<for>for)\s+(?P<a>{_NAME})(?:\s*,\s*(?P<b>{_NAME}))?\s+in\s+(?P<iter>{_CHAIN})"
    rf"|(?P<if>if|elif)\s+(?:not\s+)?(?P<test>{_CHAIN})|(?P<word>else|endif|endfor))\s*[-+]?%\}}"
)


def _chain_head(match: re.Match[str] | None) -> str | None:
    """The first name of a matched `a.b.c` (group 1 the head, group 2 the rest); `None` if it is not
    one that Jinja reads as a plain name (a keyword, or too long a chain)."""
    if match is None:
        return None
    words = [match.group(1), *(part.strip() for part in match.group(2).split(".")[1:])]
    if len(words) > 8 or any(word in _JINJA_WORDS for word in words):
        return None
    return match.group(1)


def _chain(text: str) -> str | None:
    return _chain_head(re.fullmatch(rf"({_NAME})((?:\s*\.\s*{_NAME})*)", text))


def _step(tag: re.Match[str], open_blocks: list[tuple[str, str, frozenset[str]]]) -> str | None:
    """Apply one simple block tag to the open blocks; the name its expression reads (`""` for none),
    or `None` when Jinja would refuse the tag here (left to the full way, which says why)."""
    top = open_blocks[-1] if open_blocks else ("", "", frozenset())
    if tag.group("for"):
        targets = [name for name in (tag.group("a"), tag.group("b")) if name]
        if any(name in _JINJA_WORDS or name == "loop" for name in targets):
            return None
        read = _chain(tag.group("iter"))
        open_blocks.append(("for", "body", frozenset(targets) | {"loop"}))
        return read
    if tag.group("if"):
        if tag.group("if") == "elif" and (top[0] != "if" or top[1] == "else"):
            return None
        if tag.group("if") == "if":
            open_blocks.append(("if", "if", frozenset()))
        return _chain(tag.group("test"))
    word = tag.group("word")
    if word == "else" and top[0] and top[1] != "else":
        open_blocks[-1] = (top[0], "else", frozenset())  # a loop's else arm runs without its variables
        return ""
    if word == "end" + top[0]:
        open_blocks.pop()
        return ""
    return None


def simple_names(region: str, env: jinja2.Environment) -> frozenset[str] | None:
    """The name `{{ name }}` or `{{ a.b.c }}` reads, without parsing it (the commonest region by far);
    `None` for anything else. Such a region is always valid Jinja, so nothing is lost."""
    name = _chain_head(_SIMPLE.fullmatch(region))  # deep chains take the full way
    if name is None:
        return None
    return frozenset() if name in env.globals or name == "self" else frozenset({name})


def expression_names(tree: jinja2.nodes.Template, env: jinja2.Environment) -> frozenset[str] | None:
    """The context names an expression (parsed as `{{ expr }}`) reads; `None` when only compiling it can
    tell (an unknown filter or test, a very deep tree). Expressions declare nothing, so every name is
    read from the context."""
    read = Analyzer(env).walk(tree)
    return None if read is None else frozenset(read) - frozenset(env.globals) - {"self"}


_STATEMENTS = (jinja2.nodes.Template, jinja2.nodes.Output, jinja2.nodes.If, jinja2.nodes.For, jinja2.nodes.Continue,
               jinja2.nodes.Break)  # fmt: skip


def _free(node: jinja2.nodes.Node, bound: frozenset[str]) -> frozenset[str] | None:
    """Names read from the context by a tree of `{% if %}`/`{% for %}` blocks and `{{ }}` output (a
    loop's variables and `loop` are its own); `None` for any other statement (the caller asks Jinja)."""
    if isinstance(node, jinja2.nodes.Stmt) and not isinstance(node, _STATEMENTS):
        return None
    if isinstance(node, jinja2.nodes.For):
        names = [node.target, *node.target.find_all(jinja2.nodes.Name)]
        targets = frozenset(n.name for n in names if isinstance(n, jinja2.nodes.Name)) | {"loop"}
        parts = [_free(node.iter, bound), _free_all(node.body, bound | targets), _free_all(node.else_, bound)]
        if node.test is not None:
            parts.append(_free(node.test, bound | targets))
        return None if any(p is None for p in parts) or node.recursive else frozenset().union(*parts)  # type: ignore[arg-type]
    if isinstance(node, jinja2.nodes.Name):
        return frozenset() if node.name in bound or node.ctx != "load" else frozenset({node.name})
    return _free_all(list(node.iter_child_nodes()), bound)


def _free_all(nodes: list[jinja2.nodes.Node], bound: frozenset[str]) -> frozenset[str] | None:
    names: set[str] = set()
    for child in nodes:
        found = _free(child, bound)
        if found is None:
            return None
        names |= found
    return frozenset(names)
