"""What a model that cannot look was given, in one sentence: "I was given a 640×480 PNG and a table of
5,000 rows × 3 columns (showing 20)."

The offline model says it (so the quickstart shows that a figure and a DataFrame really reached the
model), and it reads the same facts any model gets: the parts' sizes and each table's caption line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .parts import Media

_CAPTION = re.compile(r"(?:DataFrame|Series): ([\d,]+) rows × ([\d,]+) columns$", re.MULTILINE)
_MORE = re.compile(r"^… [\d,]+ more rows \(showing the first ([\d,]+)\)$", re.MULTILINE)


def tables_in(text: str) -> list[str]:
    """`a table of 5,000 rows × 3 columns (showing 20)` for each table `media.tables` wrote into `text`."""
    found = []
    captions = list(_CAPTION.finditer(text))
    for i, caption in enumerate(captions):
        end = captions[i + 1].start() if i + 1 < len(captions) else len(text)
        more = _MORE.search(text, caption.end(), end)
        rows, cols = caption[1], caption[2]
        shown = more[1] if more else rows
        found.append(f"a table of {rows} rows × {cols} columns (showing {shown})")
    return found


def given_sentence(media: Sequence[Media], texts: Sequence[str]) -> str | None:
    """The sentence, or `None` when there was neither media nor a table."""
    things = [m.label for m in media] + [t for text in texts for t in tables_in(text)]
    if not things:
        return None
    listed = things[0] if len(things) == 1 else ", ".join(things[:-1]) + " and " + things[-1]
    return f"I was given {listed}."
