"""Whether a slot's prompt may be rendered on the event loop instead of in a worker thread.

The engine renders prompts in a thread (`engine/execute.py`) because a render can run user code
(`{{ f() }}`, a filter, an attribute that is a property, `__str__`) or a loop that never ends, and
the kernel's loop, and Stop, must stay live. That hop costs a thread wake-up and two GIL hand-offs
per slot: a fifth of a batch row's CPU (bench/results/HISTORY-sessions-1-17.md §7c). Most batch prompts need none of it:
`SHOUT: {{ item }}` reads one string. Such a render runs no code but Jinja's and `str()` of a
builtin value, and its size is known before it starts, so it cannot block the loop for long.

`plain_reads` decides at compile time whether every text of a slot is *plain*: literal text and
`{{ name }}` regions only (no filter, call, attribute, test, block or whitespace control). A slot
with `{{ }}` options, computed choices or expression arguments is not plain. `PlainReads.fits`
then checks the values at run time: each name bound to a `str`, `int`, `float`, `bool` or `None`
(the exact types: a subclass may override `__str__`), and the whole prompt small.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .jinja import PLAIN_REGION, CompiledText

INLINE_CHARS = 100_000
"""Largest prompt (literal text plus the values, once per reference) rendered on the loop."""
INLINE_REGIONS = 64
"""Most `{{ name }}` regions a plain slot may hold (the first render compiles them to Python)."""

_SCALARS = frozenset({str, int, float, bool, type(None)})


@dataclass(frozen=True, slots=True)
class PlainReads:
    """What a plain slot's render reads: each name with its number of references, and its literal size."""

    counts: tuple[tuple[str, int], ...]
    literal: int

    def fits(self, context: Mapping[str, Any]) -> bool:
        """Whether rendering against `context` runs no user code and stays under `INLINE_CHARS`."""
        size = self.literal
        for name, count in self.counts:
            if name not in context:
                return False  # the render fails; the thread path reports it as always
            value = context[name]
            if type(value) not in _SCALARS:
                return False
            size += count * (len(value) if type(value) is str else 32)
        return size <= INLINE_CHARS


def plain_reads(texts: Iterable[CompiledText]) -> PlainReads | None:
    """The names `texts` read if every one of them is plain, else `None`."""
    counts: dict[str, int] = {}
    literal = regions = 0
    for text in texts:
        if text.literal is not None:
            literal += len(text.literal)
            continue
        if text.environment is None or text.assigned:
            return None
        for part in text.node.parts:
            if part.kind == "data":
                literal += len(part.source)
                continue
            match = PLAIN_REGION.fullmatch(part.source) if part.kind == "variable" else None
            if match is None or match[1] in text.environment.globals:
                return None
            counts[match[1]] = counts.get(match[1], 0) + 1
            regions += 1
    if regions > INLINE_REGIONS or literal > INLINE_CHARS:
        return None
    return PlainReads(tuple(counts.items()), literal)
