"""How a batch runs its rows, as one value (`map`'s batch keywords; the magic's `--concurrency`, `--max-cost`,
`--keep`, `--resume`). The per-row run options are a `RunOptions`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchOptions:
    """How a batch runs its rows (the per-row run options are a `RunOptions`)."""

    concurrency: int = 8
    """Rows running at once."""
    max_cost: float | None = None
    """Stop starting rows once the known cost (USD) passes this; rows running go on to their end."""
    keep: bool = False
    """Keep the input columns in the results table."""
    resume: bool = False
    """Skip rows an earlier batch over the same template finished (same row content)."""
