"""Batch: one template over many rows — `agentcell.map(template, rows, ...)` → `Batch`.

* `inputs.py` reads `--over` values into rows and checks them against the template;
* `runner.py` runs the rows concurrently on the running loop (`Batch`), as `settings.py` says (`BatchOptions`);
* `throttle.py` is the one back-off a 429 puts on every row;
* `results.py` is the table (`BatchResult.to_pandas()`, records, CSV/JSON/Parquet);
* `scoring.py` scores each finished row (`expect=`, `evaluators=`; the default check is `expect.py`'s),
  `summary.py` gives the numbers, `regress.py` compares with a baseline batch, `evals_report.py` makes a
  pydantic-evals `EvaluationReport`;
* `resume.py` journals rows as they finish so `resume=True` skips what is done;
* `dask.py` runs the rows on a Dask cluster instead (`client=`).

This package sits above the engine (a row is one engine run) and below the kernel glue
(`batch_view.py` shows a batch in a widget).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from hashlib import sha256
from typing import Any, Unpack, overload

from ..errors import AgentcellError
from ..options import MapOptionsKwargs, RunOptions, option_keywords, options_for
from ..template.program import Template
from .compare import Comparison, compare, start_comparison
from .compare_rows import ComparedBatch, ComparedBatchResult, start_compared_batch
from .errors import BatchError
from .inputs import Row, check_rows, read_rows
from .results import BatchResult, RowResult
from .resume import journal_folder, manifest_path, open_manifest
from .runner import Batch
from .scoring import Score, Scorer
from .settings import BatchOptions
from .throttle import Throttle, gated

__all__ = ["Batch", "BatchError", "BatchOptions", "BatchResult", "ComparedBatch", "ComparedBatchResult", "Comparison",
           "Row", "RowResult", "Score", "compare", "map", "start_batch", "start_compared_batch", "start_comparison"]


@overload
def map(template: Template | str, rows: Any, *, concurrency: int = 8, max_rows: int | None = None,
        max_cost: float | None = None, keep: bool = False, resume: bool = False, client: Any = None,
        expect: Mapping[str, str] | None = None, evaluators: Sequence[Any] | None = None, baseline: Any = None,
        models: None = None, names: None = None, **options: Unpack[MapOptionsKwargs]) -> Batch: ...


@overload
def map(template: Template | str, rows: Any, *, concurrency: int = 8, max_rows: int | None = None,
        max_cost: float | None = None, keep: bool = False, resume: bool = False, client: None = None,
        expect: Mapping[str, str] | None = None, evaluators: Sequence[Any] | None = None, baseline: None = None,
        models: Sequence[Any], names: Sequence[str] | None = None,
        **options: Unpack[MapOptionsKwargs]) -> ComparedBatch: ...


@option_keywords
def map(
    template: Template | str,
    rows: Any,
    *,
    concurrency: int = 8,
    max_rows: int | None = None,
    max_cost: float | None = None,
    keep: bool = False,
    resume: bool = False,
    client: Any = None,
    expect: Mapping[str, str] | None = None,
    evaluators: Sequence[Any] | None = None,
    baseline: Any = None,
    models: Sequence[Any] | None = None,
    names: Sequence[str] | None = None,
    **options: Unpack[MapOptionsKwargs],
) -> Batch | ComparedBatch:
    """Run `template` once per row of `rows`, `concurrency` rows at a time; returns the `Batch` at once.

    `rows` is a pandas DataFrame, a list of dicts, a list of strings (`{{ item }}`) or a glob of files
    (`{{ filename }}`, `{{ text }}`). Each row's fields are template variables on top of `context`.
    The run keywords are `RunOptions`' (per row; `history`, `run_id` and `resume_from` belong to one
    run and are not among them); `max_rows` takes the first rows only (at least 1), `max_cost`
    stops starting rows once the known cost passes it (USD), `keep` keeps the input columns in the
    results, `resume` skips rows an earlier batch over the same template finished, and `client` (an
    asynchronous `distributed.Client`) runs the rows on a Dask cluster.

    Scores (`scoring.py`): `expect` maps an answer slot to the column of the rows holding its expected
    value (`{"answer": "gold"}`); `evaluators` are functions `(output, expected, row) -> bool | float | dict`
    or pydantic-evals `Evaluator`s (default with `expect`: a type-aware equality). Each row is scored as it
    finishes; `BatchResult.summary()`, `.to_pandas()` and `.report()` show the scores. `baseline` (an
    earlier `BatchResult` or `Batch` over the same rows) is what `BatchResult.comparison` compares with.

    `models=[A, B]` (instead of `model=`) runs the batch once per model over the same rows, as
    `compare(template, models=[A, B], over=rows)` does, and returns its `ComparedBatch` (awaited: a
    `ComparedBatchResult`; `names` renames the models). `models=` always gives a `ComparedBatch`, even with one
    model, so code written for several models runs unchanged on one. Not with `client` or `baseline`.

    `async for row in batch` gives each `RowResult` as it finishes; `await batch` the `BatchResult`;
    `batch.cancel()` stops everything.

    Raises (before any row starts): `BatchError` for bad rows, `TemplateSyntaxError`,
    `ToolDefinitionError`, `ModelConfigError`.
    """
    chosen = options_for(map, options)
    settings = BatchOptions(concurrency=concurrency, max_cost=max_cost, keep=keep, resume=resume)
    if models is not None or names is not None:
        _check_models(models, names, options, client=client, baseline=baseline)
        assert models is not None
        return start_compared_batch(template, models, rows, chosen, settings, names=names, max_rows=max_rows,
                                    expect=expect, evaluators=evaluators)
    return start_batch(template, rows, chosen, settings, max_rows=max_rows, client=client, expect=expect,
                       evaluators=evaluators, baseline=baseline)


def start_batch(
    template: Template | str,
    over: Any,
    options: RunOptions,
    settings: BatchOptions,
    *,
    max_rows: int | None = None,
    client: Any = None,
    expect: Mapping[str, str] | None = None,
    evaluators: Sequence[Any] | None = None,
    baseline: Any = None,
    journal_tag: str | None = None,
) -> Batch:
    """`map` with its options as values (what the magic calls): check everything, then start the batch.

    `journal_tag` names the batch's journal beside its template (a comparison's model): batches over the same
    template with different tags never share a manifest, so `resume` never gives one model another's answers."""
    from ..engine.toolbox import build_registry, check_toolsets
    from ..providers.models import resolve_model

    compiled = _compile(template)
    if settings.concurrency < 1:
        raise BatchError(f"concurrency must be at least 1, got {settings.concurrency}")
    rows = read_rows(over, max_rows=max_rows)
    check_rows(rows, compiled.variables, list(options.context or {}))
    scorer = _scorer(compiled, expect, evaluators)
    if scorer is not None:
        scorer.check_rows(rows)
    earlier = _baseline_rows(baseline)
    build_registry(options.tools, dispatch=options.dispatch, approve_writes=options.approve_writes)
    check_toolsets(options.toolsets)
    throttle = Throttle()
    resolved = resolve_model(options.model)  # a bad model name fails now, not in every row
    shared = gated(resolved.model, throttle)
    if client is None and shared is not resolved.model:
        options = replace(options, model=shared)  # one model (and HTTP client) for every row, behind one back-off
    folder = journal_folder(options.journal)
    if settings.resume and folder is None:
        raise BatchError("resume needs the journal, which is off here (journal=False or AGENTCELL_JOURNAL=off)")
    identity = compiled.sha256 if journal_tag is None else _tagged(compiled.sha256, journal_tag)
    path = manifest_path(identity, folder if folder is not None else False)
    # The rows' run journals go in a folder of their own beside the manifest (`batches/<template hash>/`), so the
    # retention rule counts the batch as one journal and never evicts the notebook's other runs (journal/store.py).
    options = replace(options, journal=path.with_suffix("") if path is not None else False)
    manifest = open_manifest(path)  # `None` (and a warning) when it cannot be opened: the rows still run
    if client is not None:
        from .dask import DaskRows, travelling

        runner = DaskRows(client, compiled, options)
        rows = travelling(rows)
        batch = Batch(compiled, rows, options, settings, throttle=throttle, manifest=manifest,
                      runner=runner, engine="dask", scorer=scorer, baseline=earlier)
        runner.bind(batch)
        return batch
    batch = Batch(compiled, rows, options, settings, throttle=throttle, manifest=manifest, scorer=scorer,
                  baseline=earlier)
    batch.owned_model = shared if resolved.owned and shared is not resolved.model else None
    return batch


def _check_models(models: Sequence[Any] | None, names: Sequence[str] | None, options: Mapping[str, object], *,
                  client: Any, baseline: Any) -> None:
    """`map(models=...)`'s keywords that one batch per model cannot take, each refused in one sentence."""
    if models is None:
        raise AgentcellError("names= names the models of models=[...]; pass models= too (or drop names=)")
    if "model" in options:
        raise AgentcellError("pass model= for one model or models=[...] for several, not both")
    if isinstance(models, str) or not isinstance(models, Sequence):
        raise AgentcellError(f"models= takes a list of models (['offline', 'openai:gpt-4o-mini']), "
                             f"got {type(models).__name__}")
    if client is not None:
        raise AgentcellError("client= runs one batch on Dask; with models= each model's batch runs in this kernel")
    if baseline is not None:
        raise AgentcellError("baseline= compares a batch with an earlier one on one model; with models= the "
                             "models' scores are side by side already")


def _tagged(template_sha256: str, tag: str) -> str:
    """The journal identity of a tagged batch over the template (`start_batch`'s `journal_tag`)."""
    return sha256(f"{template_sha256}\n{tag}".encode()).hexdigest()


def _scorer(template: Template, expect: Mapping[str, str] | None, evaluators: Sequence[Any] | None) -> Scorer | None:
    if not expect and evaluators is None:
        return None
    if expect is not None and not isinstance(expect, Mapping):
        raise BatchError(f"expect must map slot names to columns ({{'answer': 'gold'}}), got {type(expect).__name__}")
    slots = [(s.name, str(s.type)) for s in template.slots if s.type != "halt"]
    return Scorer(dict(expect or {}), evaluators, slots)


def _baseline_rows(baseline: Any) -> tuple[RowResult, ...] | None:
    """The rows of `baseline` (a `BatchResult` or a `Batch`, finished or not); `None`: no baseline."""
    if baseline is None:
        return None
    if isinstance(baseline, BatchResult | Batch):
        return tuple(baseline.rows)
    raise BatchError(f"baseline must be an earlier batch (a BatchResult or Batch), got {type(baseline).__name__}")


def _compile(template: Template | str) -> Template:
    if not isinstance(template, str):
        return template
    from ..template import compile_template

    return compile_template(template)

