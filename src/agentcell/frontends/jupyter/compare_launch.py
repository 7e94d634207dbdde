"""`%%agent --models A,B,C`: the cell on several models at once, shown side by side.

The magic builds the cell's spec as for one run (without a model or cassette), then each model's run
is started through `handle.launch` (a live widget per model, kept in the run registry so re-running
the cell replaces all of them) and gathered in a `Comparison` (`batch/compare.py`), which the cell binds
with `-o`. `--record` / `--replay` give each model its own cassette.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...batch import BatchOptions, ComparedBatch, start_compared_batch
from ...batch.compare import Comparison, start_comparison
from ...engine import Run
from ...options import RunOptions
from ...template.program import Template
from ..handle import RunHandle, launch
from ..launch import LaunchSpec
from ..registry import RunRegistry
from ..widget.compare_view import CompareView


def model_names(value: str) -> list[str]:
    """`--models a,b, c` → `["a", "b", "c"]` (a model string's own `:` and `@` are kept)."""
    return [name.strip() for name in value.split(",") if name.strip()]


def launch_comparison(
    spec: LaunchSpec,
    models: Sequence[Any],
    names: Sequence[str],
    *,
    record: str | None,
    replay: str | None,
    registry: RunRegistry | None,
    display: bool = True,
) -> Comparison:
    """Start every model's run of `spec` (each with its widget), show the columns, return the `Comparison`."""
    handles: dict[str, RunHandle] = {}
    generation = object()  # the runs of one execution of the cell coexist; the next execution replaces them

    def starter(name: str, options: RunOptions, _template: Template | str) -> Run:
        one = replace(spec, options=options)
        handle = launch(one, registry=registry, generation=generation)
        handles[name] = handle
        return handle.run

    comparison = start_comparison(spec.template, models, spec.options, names=names, record=record, replay=replay,
                                  starter=starter)
    if spec.quiet or not display:
        return comparison
    columns = {name: (handles[name].widget if name in handles and handles[name].widget is not None
                      else f"could not start: {comparison.results[name].error}") for name in comparison.models}
    view = CompareView(columns, on_stop_all=comparison.cancel)  # type: ignore[arg-type]
    view.show()
    loop = asyncio.get_running_loop()

    def ended(_name: str) -> None:
        if comparison.done():
            loop.call_soon(view.finish, comparison.results, dict(comparison.latency))

    comparison.watch(ended)
    if comparison.done():
        view.finish(comparison.results, dict(comparison.latency))
    return comparison


def launch_compared_batch(
    spec: LaunchSpec,
    models: Sequence[Any],
    names: Sequence[str],
    over: Any,
    settings: BatchOptions,
    *,
    max_rows: int | None,
    registry: RunRegistry | None,
    scoring: Mapping[str, Any] | None = None,
) -> ComparedBatch:
    """`--models A,B --over rows`: one batch per model, their progress widgets side by side. Scored (`scoring`:
    `expect`, `evaluators`), the models' scores come first: the model-selection table and each row's marks."""
    compared = start_compared_batch(spec.template, models, over, spec.options, settings, names=names,
                                    max_rows=max_rows, **(scoring or {}))
    generation = object()
    for batch in compared.batches.values():
        if registry is not None:
            registry.add(batch, place=spec.key, generation=generation)
    if not spec.quiet:
        from .batch_display import show_compared

        show_compared(compared, table=bool(scoring))
    return compared


def compare_from_cell(
    args: Any,
    spec_of: Callable[..., LaunchSpec],
    model_of: Callable[[str], Any],
    evaluate: Callable[..., Any],
    registry: RunRegistry | None,
) -> tuple[LaunchSpec, Comparison | ComparedBatch]:
    """`%%agent --models A,B,C` after its line was parsed: the cell's spec built once without a model or cassette
    (`spec_of(args, build=None)`, the magic's own), then one run per model — or, with `--over`, one batch per
    model. Raises `UsageError` / `AgentcellError` like the magic's other paths."""
    import copy

    from IPython.core.error import UsageError

    from ...batch import BatchError
    from .batch_args import over_value
    from .batch_launch import batch_spec, scoring_from

    names = model_names(args.models or "")
    if not names:
        raise UsageError("--models needs model names separated by commas, e.g. --models offline,my_model")
    models = [model_of(name) for name in names]
    one = copy.copy(args)
    one.model, one.record, one.replay = None, None, None  # each model gets its own model and cassette
    if args.over is None:
        if getattr(args, "expect", None) or getattr(args, "evaluators", None):
            raise BatchError("--expect and --evaluators score the rows of a dataset: add --over ROWS")
        spec = spec_of(one)
        return spec, launch_comparison(spec, models, names, record=args.record, replay=args.replay, registry=registry)
    if args.record or args.replay:
        raise BatchError("--record and --replay follow one run's requests in order; not with --over")
    if getattr(args, "baseline", None):
        raise BatchError("--baseline compares a batch with an earlier one on one model; with --models the models' "
                         "scores are side by side already (drop --baseline, or run each model on its own)")
    over = over_value(args.over, evaluate)
    spec = spec_of(one, build=batch_spec)
    settings = BatchOptions(concurrency=args.concurrency, max_cost=args.max_cost, keep=args.keep, resume=args.resume)
    scoring = scoring_from(args, spec.key, evaluate, registry)
    return spec, launch_compared_batch(spec, models, names, over, settings, max_rows=args.max_rows, registry=registry,
                                       scoring=scoring)
