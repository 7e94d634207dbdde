"""Compare over rows: the same template over the same rows on several models — one batch per model.

`compare(template, models=[...], over=rows)` (and `%%agent --models A,B --over rows`) start one `Batch`
per model at once; each is a full batch (its own concurrency, 429 back-off, journal and manifest). The
result is one table with a row per (input row, model), so per-model scores are a `groupby("model")` away.
With `expect=` / `evaluators=` every model's rows are scored alike: `summary()` gives each model's numbers,
`model_table()` the model-selection table (`by_model.py`), `to_pandas(wide=True)` each row's scores per model
side by side, `report()` one pydantic-evals `EvaluationReport` per model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import AgentcellError
from ..options import RunOptions
from ..template.program import Template
from .by_model import model_numbers, selection
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

    def to_pandas(self, *, wide: bool = False) -> Any:
        """`to_records()` as a pandas DataFrame (needs pandas). `wide=True`: one row per input row, its columns
        `(column, model)` pairs side by side (`frame["passed"]` is each model's pass column)."""
        import pandas as pd

        if not wide:
            return pd.DataFrame.from_records(self.to_records())
        parts = {name: result.to_pandas() for name, result in self.results.items()}
        columns = list(dict.fromkeys(c for part in parts.values() for c in part.columns))
        frame = pd.concat(parts, axis=1, names=["model", "column"]).swaplevel(axis=1)
        order = pd.MultiIndex.from_tuples([(c, m) for c in columns for m in parts], names=["column", "model"])
        return frame.reindex(columns=order)  # the table's column order, each column once per model

    def summary(self) -> dict[str, dict[str, Any]]:
        """Model → its numbers: `BatchResult.summary()`'s (pass rate, means, failures) plus `cost`, `cost_text`,
        `median_latency_s` and `failed_runs` (`by_model.model_numbers`)."""
        return {name: model_numbers(result.rows) for name, result in self.results.items()}

    def model_table(self) -> Any:
        """The model-selection table as a pandas DataFrame, one row per model: `passed`, `scored`, `pass_rate`,
        `mean <slot>:<evaluator>` per score column, `cost` (USD; `None` unknown), `cost_text`, `median_latency_s`,
        `failed_runs`."""
        import pandas as pd

        records = []
        for row in selection({name: result.rows for name, result in self.results.items()}):
            means = {f"mean {column}": value for column, value in row.pop("mean").items()}
            records.append({**row, **means})
        return pd.DataFrame.from_records(records).set_index("model")

    def __repr__(self) -> str:
        parts = []
        for model, result in self.results.items():
            n = result.summary()
            parts.append(f"{model}: " + (f"{n['passed']}/{n['scored']} passed" if n["scored"] else
                                         f"{len(result.rows)} rows"))
        return f"<ComparedBatchResult {'; '.join(parts)}>"

    def report(self, name: str = "agentcell batch") -> dict[str, Any]:
        """Model → its scores as a pydantic-evals `EvaluationReport` (`BatchResult.report`; needs
        `agentcell[evals]`): `reports[b].print(baseline=reports[a])` shows one model against the other."""
        return {model: result.report(f"{name}: {model}") for model, result in self.results.items()}


class ComparedBatch:
    """One running batch per model over the same rows; awaitable (→ `ComparedBatchResult`)."""

    def __init__(self, batches: Mapping[str, Batch]) -> None:
        self.batches = dict(batches)
        self.models = tuple(self.batches)
        self.view: Any = None
        """The scored models' side-by-side widget, when a notebook shows one (`ModelsWidget`)."""
        self._adopters: list[Callable[[str, Batch], None]] = []

    @property
    def run_id(self) -> str:
        return "+".join(b.run_id for b in self.batches.values())

    @property
    def done(self) -> bool:
        return all(b.done for b in self.batches.values())

    @property
    def result(self) -> ComparedBatchResult | None:
        """Every model's `BatchResult` once every model's batch has ended, else `None`."""
        results = {name: b.result for name, b in self.batches.items()}
        if any(r is None for r in results.values()):
            return None
        return ComparedBatchResult(results={name: r for name, r in results.items() if r is not None})

    def cancel(self, model: str | None = None) -> None:
        """Stop every model's batch, or only `model`'s (thread-safe, like `Batch.cancel`)."""
        if model is not None and model not in self.batches:
            raise AgentcellError(f"no model {model!r} in this comparison (its models: {', '.join(self.models)})")
        for name, batch in self.batches.items():
            if model is None or name == model:
                batch.cancel()

    def adopt(self, model: str, batch: Batch) -> None:
        """`batch` stands for `model` from now on: a retry of that model's batch (`Batch.retry`, its widget's
        "Retry failed rows") over the same rows. The result, `await` and whoever follows `on_adopt` (the models'
        view: pass rate, cost, latency) read the retried rows."""
        if model not in self.batches:
            raise AgentcellError(f"no model {model!r} in this comparison (its models: {', '.join(self.models)})")
        self.batches[model] = batch
        for fn in self._adopters:
            fn(model, batch)

    def on_adopt(self, fn: Callable[[str, Batch], None]) -> None:
        """Call `fn(model, batch)` when a model's batch is replaced by its retry (`adopt`)."""
        self._adopters.append(fn)

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
    expect: Mapping[str, str] | None = None,
    evaluators: Sequence[Any] | None = None,
) -> ComparedBatch:
    """Start one batch of `template` over `over` per model (each scored by `expect` / `evaluators`, like
    `start_batch`'s); a model that cannot start fails the call (before any row runs) naming it, since its
    column of the table would be empty."""
    from . import start_batch

    batches: dict[str, Batch] = {}
    try:
        for entrant in entrants(models, names):
            try:
                batches[entrant.name] = start_batch(template, over, replace(options, model=entrant.model), settings,
                                                    max_rows=max_rows, expect=expect, evaluators=evaluators,
                                                    journal_tag=f"model {entrant.name}")  # resume: each its own rows
            except BatchError:
                raise  # the rows, the scoring or the settings: the same for every model, so not one model's fault
            except AgentcellError as exc:
                raise BatchError(f"model {entrant.name}: {exc}") from None
    except BaseException:
        for batch in batches.values():
            batch.cancel()
        raise
    return ComparedBatch(batches)
