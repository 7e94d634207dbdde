"""From a `%%agent --over EXPR` cell to a running `Batch` and its widget.

`batch_spec` compiles the cell once and builds the per-row `RunOptions` the same way a single run's
are built (`cell.build_spec`: model, tools, budgets, cassettes), except that the template's
variables may come from the rows: the namespace and `--context` are every row's base, and each row
adds its own fields. `launch_batch` starts the batch on the running loop, shows its widget and keeps
a strong reference in the shell's `RunRegistry` (re-running the cell stops the previous batch;
`%agent stop` stops it).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ...batch import Batch, BatchError, BatchOptions, start_batch
from ...options import HINT_STYLE, RunOptions
from ..launch import LaunchSpec
from ..registry import RunRegistry
from ..widget.batch_view import BatchWidget
from .batch_args import expect_value, over_value
from .cell import build_spec, compile_cell
from .notebook import namespace_snapshot


def batch_spec(cell: str, options: RunOptions, *, user_ns: Mapping[str, Any],
               hidden: Mapping[str, Any] | None = None, **spec: Any) -> LaunchSpec:
    """`build_spec` for a batch cell: variables the namespace lacks are left to the rows (checked per row)."""
    template = compile_cell(cell, include_paths=spec.get("include_paths", ()), types=spec.get("types", ()))
    base = {**namespace_snapshot(user_ns, hidden), **(options.context or {})}
    holes = dict.fromkeys((v for v in template.variables if v not in base), None)
    with_holes = replace(options, context={**(options.context or {}), **holes})
    built = build_spec(cell, with_holes, user_ns=user_ns, hidden=hidden, **spec)
    return replace(built, options=replace(built.options, context=base))


def dask_client(engine: str) -> Any:
    """The asynchronous `distributed.Client` `--engine dask` runs on (the default client of this kernel)."""
    if engine != "dask":
        return None
    try:
        from distributed import default_client
    except ImportError:
        raise BatchError("--engine dask needs the dask extra: pip install 'agentcell[dask]'") from None
    try:
        client = default_client()  # type: ignore[no-untyped-call]
    except ValueError:
        raise BatchError(
            "--engine dask found no Dask client; create one in a cell first: "
            "`from distributed import Client; client = await Client(asynchronous=True)` (a local cluster) or "
            "`await Client('tcp://scheduler:8786', asynchronous=True)`"
        ) from None
    return client


def launch_batch(
    spec: LaunchSpec,
    over: Any,
    settings: BatchOptions,
    *,
    max_rows: int | None = None,
    engine: str = "kernel",
    registry: RunRegistry | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> Batch:
    """Start the batch a cell describes and show its widget (unless `--quiet`); returns the `Batch`.

    `scoring`: `start_batch`'s `expect`, `evaluators` and `baseline`, when the cell scores its rows."""
    batch = start_batch(spec.template, over, spec.options, settings, max_rows=max_rows, client=dask_client(engine),
                        **(scoring or {}))
    if registry is not None:
        LAST_BATCH.setdefault(registry, {})[spec.key or NO_CELL] = batch
    if not spec.quiet:
        batch.view = BatchWidget(batch)
        batch.view.show()
    if registry is not None:
        registry.add(batch, place=spec.key)
    return batch


LAST_BATCH: weakref.WeakKeyDictionary[RunRegistry, dict[str, Batch]] = weakref.WeakKeyDictionary()
"""Per shell (its registry), each cell's latest batch (what `--baseline last` compares with)."""
NO_CELL = "(no cell id)"
"""The place of a batch from a shell that sends no cell ids (a terminal IPython): `last` is its latest batch."""


def scoring_from(args: Any, key: str | None, evaluate: Callable[..., Any],
                 registry: RunRegistry | None) -> dict[str, Any]:
    """`--expect`, `--evaluators` and `--baseline` as `start_batch`'s keywords (empty: the cell scores nothing)."""
    try:
        expect = expect_value(getattr(args, "expect", None))
    except ValueError as exc:
        raise BatchError(str(exc)) from None
    out: dict[str, Any] = {}
    if expect:
        out["expect"] = expect
    if getattr(args, "evaluators", None):
        out["evaluators"] = evaluate(args.evaluators, "--evaluators")
    name = getattr(args, "baseline", None)
    if name == "last":
        # the cell's first batch has nothing to compare with yet
        out["baseline"] = None if registry is None else LAST_BATCH.get(registry, {}).get(key or NO_CELL)
    elif name:
        out["baseline"] = evaluate(name, "--baseline")
    return out


def launch_from_cell(
    args: Any, spec: Callable[[], LaunchSpec], evaluate: Callable[..., Any], registry: RunRegistry
) -> tuple[LaunchSpec, Batch]:
    """What `%%agent --over` does with its parsed line: check the flags, build the spec, start the batch.

    `spec()` builds the cell's spec (the magic's own flag handling, with `batch_spec`); `evaluate(expr, flag)`
    evaluates `--over` (and `--evaluators`, `--baseline NAME`) in the notebook. Raises agentcell errors (the
    magic turns them into one line).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise BatchError("--over runs rows on the notebook's event loop; from a script use "
                         "`asyncio.run(agentcell.map(...).wait())`") from None
    for flag in ("concurrency", "max_rows"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise BatchError(f"--{flag.replace('_', '-')} must be a positive whole number, got {value}")
    over = over_value(args.over, evaluate)
    settings = BatchOptions(concurrency=args.concurrency, max_cost=args.max_cost, keep=args.keep, resume=args.resume)
    built = spec()
    if built.record or built.replay:
        raise BatchError("--record and --replay follow one run's requests in order; a batch runs many rows at "
                         "once: record a single row with %%agent instead")
    if built.options.approve_writes:  # --approve writes, or `%agent config approve=writes`
        raise BatchError("--approve writes waits for a click before each call, which a batch of rows cannot do; "
                         "mark the tools @readonly, or pass approve= to agentcell.map from Python")
    scoring = scoring_from(args, built.key, evaluate, registry)
    # The batch's tasks copy this context: each row's messages (budget hints, the offline model's advice)
    # speak the cell's words (`--model`, `--max-iter`), not Python's (`model=`), as a single cell's run does.
    token = HINT_STYLE.set("cell")
    try:
        return built, launch_batch(built, over, settings, max_rows=args.max_rows, engine=args.engine, registry=registry,
                                   scoring=scoring)
    finally:
        HINT_STYLE.reset(token)


async def wait_batch(batch: Batch) -> Any:
    """`%%agent --over X --wait`: the cell waits for every row; Kernel → Interrupt stops the batch."""
    try:
        return await batch
    except asyncio.CancelledError:
        batch.cancel()
        await asyncio.shield(batch.wait())
        raise
