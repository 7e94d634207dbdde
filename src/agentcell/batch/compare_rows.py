"""Compare over rows: the same template over the same rows on several models — one batch per model.

`compare(template, models=[...], over=rows)` (and `%%agent --models A,B --over rows`) start one `Batch`
per model at once; each is a full batch (its own concurrency, 429 back-off, journal and manifest). The
result is one table with a row per (input row, model), so per-model scores are a `groupby("model")` away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import AgentcellError
from ..options import RunOptions
from ..template.program import Template
from .entrants import entrants
from .errors import BatchError
from .results import BatchResult
from .runner import Batch
from .settings import BatchOptions


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparedBatchResult:
    """Every model's `BatchResult`, in the models' order."""

    results: Mapping[str, BatchResult]

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per (input row, model), rows in input order and models side by side: `row`, `model`, then
        the batch table's columns (slot values, status, error, usage, run id)."""
        tables = {name: result.to_records() for name, result in self.results.items()}
        count = max((len(t) for t in tables.values()), default=0)
        return [{"row": i, "model": name, **table[i]} for i in range(count)
                for name, table in tables.items() if i < len(table)]

    def to_pandas(self) -> Any:
        """`to_records()` as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())


class ComparedBatch:
    """One running batch per model over the same rows; awaitable (→ `ComparedBatchResult`)."""

    def __init__(self, batches: Mapping[str, Batch]) -> None:
        self.batches = dict(batches)
        self.models = tuple(self.batches)

    @property
    def run_id(self) -> str:
        return "+".join(b.run_id for b in self.batches.values())

    @property
    def done(self) -> bool:
        return all(b.done for b in self.batches.values())

    def cancel(self, model: str | None = None) -> None:
        """Stop every model's batch, or only `model`'s (thread-safe, like `Batch.cancel`)."""
        if model is not None and model not in self.batches:
            raise AgentcellError(f"no model {model!r} in this comparison (its models: {', '.join(self.models)})")
        for name, batch in self.batches.items():
            if model is None or name == model:
                batch.cancel()

    def supersede(self) -> None:
        for batch in self.batches.values():
            batch.supersede()

    async def wait(self) -> ComparedBatchResult:
        results = await asyncio.gather(*(asyncio.shield(b.wait()) for b in self.batches.values()))
        return ComparedBatchResult(results=dict(zip(self.models, results, strict=True)))

    def __await__(self) -> Generator[Any, None, ComparedBatchResult]:
        return self.wait().__await__()

    def __repr__(self) -> str:
        return f"<agentcell comparison over rows of {', '.join(self.models)}>"


def start_compared_batch(
    template: Template | str,
    models: Sequence[Any],
    over: Any,
    options: RunOptions,
    settings: BatchOptions,
    *,
    names: Sequence[str] | None = None,
    max_rows: int | None = None,
) -> ComparedBatch:
    """Start one batch of `template` over `over` per model; a model that cannot start fails the call (before
    any row runs) naming it, since its column of the table would be empty."""
    from . import start_batch

    batches: dict[str, Batch] = {}
    try:
        for entrant in entrants(models, names):
            try:
                batches[entrant.name] = start_batch(template, over, replace(options, model=entrant.model), settings,
                                                    max_rows=max_rows)
            except AgentcellError as exc:
                raise BatchError(f"model {entrant.name}: {exc}") from None
    except BaseException:
        for batch in batches.values():
            batch.cancel()
        raise
    return ComparedBatch(batches)
