"""A DataFrame or Series (pandas or polars) as the Markdown table a model reads well.

`str(df)` is pandas' fixed-width layout: the first and last five rows with `...` between, columns
dropped without saying which. Here the model gets a caption with the real shape, the first `rows` rows
as a Markdown table, and an explicit line for what was left out ("… 4,980 more rows (showing the
first 20)"). Only the shown rows and columns are ever formatted, so a 10-million-row frame costs what
a 20-row one does. pandas and polars are never imported here: a value is recognised by its type's module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROWS = 20
"""Rows shown by default (`{{ df }}`); `{{ table(df, rows=50) }}` shows more."""
COLS = 20
"""Columns shown by default."""
CHARS = 20_000
"""Most characters a table puts in the prompt; rows past it are counted in the "more rows" line."""
CELL_CHARS = 200
"""Longest cell text; longer cells end in `…`."""


@dataclass(frozen=True, slots=True)
class TableOptions:
    rows: int = ROWS
    cols: int | tuple[str, ...] = COLS
    dtypes: bool = False
    chars: int = CHARS


def is_table(value: object) -> bool:
    """Whether `value` is a pandas or polars DataFrame or Series (without importing either)."""
    cls = type(value)
    module = cls.__module__ or ""
    return module.split(".")[0] in ("pandas", "polars") and cls.__name__ in ("DataFrame", "Series")


def table_markdown(value: Any, options: TableOptions = TableOptions()) -> str:
    """`value` (see `is_table`) as a caption and a Markdown table, bounded as the module says."""
    module = type(value).__module__.split(".")[0]
    if module == "polars":
        return _polars(value, options)
    return _pandas(value, options)


def _pandas(value: Any, options: TableOptions) -> str:
    series = type(value).__name__ == "Series"
    frame = value.to_frame(name=value.name if value.name is not None else "value") if series else value
    total_rows, total_cols = frame.shape
    names = [str(c) for c in frame.columns]
    picked = _pick(names, options.cols)
    positions = [names.index(n) for n in picked]
    shown = frame.iloc[: max(options.rows, 0), positions]  # only these rows are ever formatted
    index = type(frame.index).__name__ != "RangeIndex"
    header = ([str(frame.index.name or "")] if index else []) + picked
    dtypes = ([str(frame.index.dtype)] if index else []) + [str(frame.dtypes.iloc[p]) for p in positions]
    rows: list[list[str]] = []
    for label, record in zip(shown.index, shown.itertuples(index=False, name=None), strict=True):
        rows.append(([_cell(label)] if index else []) + [_cell(v) for v in record])
    what = "Series" if series else "DataFrame"
    return _layout(what, total_rows, total_cols, header, dtypes, rows, len(picked), options)


def _polars(value: Any, options: TableOptions) -> str:
    series = type(value).__name__ == "Series"
    frame = value.to_frame() if series else value
    total_rows, total_cols = frame.height, frame.width
    names = [str(c) for c in frame.columns]
    picked = _pick(names, options.cols)
    shown = frame.select(picked).head(max(options.rows, 0))
    dtypes = [str(frame.schema[n]) for n in picked]
    rows = [[_cell(v) for v in record] for record in shown.rows()]
    what = "Series" if series else "DataFrame"
    return _layout(what, total_rows, total_cols, picked, dtypes, rows, len(picked), options)


def _pick(names: list[str], cols: int | Sequence[str]) -> list[str]:
    if isinstance(cols, int):
        return names[: max(cols, 0)]
    missing = [c for c in cols if c not in names]
    if missing:
        raise KeyError(f"table(): no column named {missing[0]!r} (the columns are {', '.join(names[:20])})")
    return list(cols)


def _cell(value: object) -> str:
    text = str(value)
    if len(text) > CELL_CHARS:
        text = text[: CELL_CHARS - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _layout(
    what: str,
    total_rows: int,
    total_cols: int,
    header: list[str],
    dtypes: list[str],
    rows: list[list[str]],
    shown_cols: int,
    options: TableOptions,
) -> str:
    lines = [f"{what}: {total_rows:,} rows × {total_cols:,} columns", ""]
    lines.append("| " + " | ".join(_cell(h) for h in header) + " |")
    lines.append("|" + "|".join("---" for _ in header) + "|")
    if options.dtypes:
        lines.append("| " + " | ".join(f"*{d}*" for d in dtypes) + " |")
    size = sum(len(line) + 1 for line in lines)
    kept = 0
    for row in rows:
        line = "| " + " | ".join(row) + " |"
        if size + len(line) + 1 > options.chars and kept:
            break
        lines.append(line)
        size += len(line) + 1
        kept += 1
    if kept < total_rows:
        lines.append(f"… {total_rows - kept:,} more rows (showing the first {kept:,})")
    if shown_cols < total_cols:
        lines.append(f"… {total_cols - shown_cols:,} more columns (showing {shown_cols:,})")
    return "\n".join(lines)
