"""Compare: the same template on several models at once — `agentcell.compare(...)` → `Comparison`.

Each model gets its own engine run (its own events, journal, transcript, cassette), all started at
once on the running loop, so the slowest model sets the wall time. A model that cannot even start
(a missing key) or fails does not stop the others: its result says why. The result's shape is kept
plain for anyone scoring models (`results`: model name → `RunResult`; `to_records()` / `to_pandas()`:
one row per model × slot, with usage and latency).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Unpack, overload

from ..engine import Run, prepare
from ..errors import AgentcellError
from ..options import CompleteOptionsKwargs, RunOptions, option_keywords, options_for
from ..result import RunResult
from ..template.program import Template
from .compare_rows import ComparedBatch, start_compared_batch
from .entrants import Entrant, cassette_for, entrants
from .settings import BatchOptions

RECORD_COLUMNS = ("model", "slot", "value", "status", "error", "requests", "tool_calls", "input_tokens",
                  "output_tokens", "cost", "latency_s", "run_id")
"""The columns of `Comparison.to_records()` / `to_pandas()`, in order."""


class Comparison:
    """Runs of one template on several models, side by side; awaitable (→ itself, every run ended).

    `runs`: model name → the engine `Run` (absent for a model that could not start); `results`: model
    name → `RunResult` of every run that ended (a model that could not start has a `failed` one);
    `cancel()` stops every model, `cancel(name)` one; `latency`: model name → seconds from start to end.
    """

    def __init__(self, names: Sequence[str]) -> None:
        self.models: tuple[str, ...] = tuple(names)
        self.runs: dict[str, Run] = {}
        self._failed: dict[str, RunResult] = {}
        self._started_at = time.perf_counter()
        self.latency: dict[str, float] = {}
        self._watchers: list[Callable[[str], None]] = []

    # ---- reading -------------------------------------------------------------------------------
    @property
    def results(self) -> dict[str, RunResult]:
        """Model name → `RunResult`, in the models' order, for each run that ended."""
        out: dict[str, RunResult] = {}
        for name in self.models:
            if name in self._failed:
                out[name] = self._failed[name]
            elif name in self.runs and self.runs[name].result is not None:
                result = self.runs[name].result
                assert result is not None
                out[name] = result
        return out

    def done(self) -> bool:
        return all(name in self._failed or self.runs[name].done() for name in self.models)

    def status(self, name: str) -> str:
        if name in self._failed:
            return "failed"
        return self.runs[name].status

    def to_records(self) -> list[dict[str, Any]]:
        """One row per model × slot value (a model with no slot value: one row, `slot` None), with usage."""
        rows: list[dict[str, Any]] = []
        for name, result in self.results.items():
            usage = result.usage
            common = {"status": result.status, "error": result.error, "requests": usage.requests,
                      "tool_calls": usage.tool_calls, "input_tokens": usage.input_tokens,
                      "output_tokens": usage.output_tokens, "cost": usage.cost,
                      "latency_s": self.latency.get(name), "run_id": result.run_id}
            slots: list[tuple[str | None, Any]] = [*result.results.items()] or [(None, None)]
            rows.extend({"model": name, "slot": slot, "value": value, **common} for slot, value in slots)
        return [{column: row[column] for column in RECORD_COLUMNS} for row in rows]

    def to_pandas(self) -> Any:
        """`to_records()` as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.to_records(), columns=list(RECORD_COLUMNS))

    # ---- control -------------------------------------------------------------------------------
    def cancel(self, model: str | None = None) -> None:
        """Stop every model's run, or only `model`'s (thread-safe, like `Run.cancel`)."""
        if model is not None and model not in self.models:
            raise AgentcellError(f"no model {model!r} in this comparison (its models: {', '.join(self.models)})")
        for name, run in self.runs.items():
            if model is None or name == model:
                run.cancel()

    def watch(self, fn: Callable[[str], None]) -> None:
        """Call `fn(model name)` when that model's run ends (a view updates its column)."""
        self._watchers.append(fn)

    async def wait(self) -> Comparison:
        await asyncio.gather(*(asyncio.shield(run.wait()) for run in self.runs.values()))
        return self

    def __await__(self) -> Generator[Any, None, Comparison]:
        return self.wait().__await__()

    def __repr__(self) -> str:
        states = ", ".join(f"{name}: {self.status(name)}" for name in self.models)
        return f"<agentcell comparison {states}>"

    # ---- starting ------------------------------------------------------------------------------
    def _add(self, name: str, run: Run) -> None:
        self.runs[name] = run
        run.add_done_callback(lambda _run: self._ended(name))

    def _fail(self, name: str, model: str, error: str) -> None:
        self._failed[name] = RunResult(run_id="", status="failed", error=error, model=model)
        self.latency[name] = 0.0

    def _ended(self, name: str) -> None:
        self.latency[name] = time.perf_counter() - self._started_at
        for fn in self._watchers:
            fn(name)


@overload
def compare(template: Template | str, *, models: Sequence[Any], names: Sequence[str] | None = None,
            record: str | None = None, replay: str | None = None, over: None = None, concurrency: int = 8,
            max_rows: int | None = None, expect: None = None, evaluators: None = None,
            **options: Unpack[CompleteOptionsKwargs]) -> Comparison: ...


@overload
def compare(template: Template | str, *, models: Sequence[Any], names: Sequence[str] | None = None,
            record: str | None = None, replay: str | None = None, over: Any, concurrency: int = 8,
            max_rows: int | None = None, expect: Mapping[str, str] | None = None,
            evaluators: Sequence[Any] | None = None, **options: Unpack[CompleteOptionsKwargs]) -> ComparedBatch: ...


@option_keywords
def compare(
    template: Template | str,
    *,
    models: Sequence[Any],
    names: Sequence[str] | None = None,
    record: str | None = None,
    replay: str | None = None,
    over: Any = None,
    concurrency: int = 8,
    max_rows: int | None = None,
    expect: Mapping[str, str] | None = None,
    evaluators: Sequence[Any] | None = None,
    **options: Unpack[CompleteOptionsKwargs],
) -> Comparison | ComparedBatch:
    """Run `template` once per model of `models`, concurrently; returns the `Comparison` at once (await it).

    `models` are model strings or pydantic-ai `Model`s (`names` overrides how they are shown); the other
    keywords are `RunOptions`' (the same for every model). `record="run.json"` records each model into its
    own cassette (`run.<model>.json`), `replay="run.json"` answers each from its own.

    With `over=rows` (what `map` takes), each model runs the template over every row (`concurrency` rows at
    a time per model, the first `max_rows` only): a `ComparedBatch`, whose result's table has one row per
    (input row, model). `expect=` / `evaluators=` (what `map` takes) score every model's rows alike: the
    result's `summary()` and `model_table()` give pass rate, mean scores, cost and latency per model.
    """
    chosen = options_for(compare, options)
    if over is not None:
        if record is not None or replay is not None:
            raise AgentcellError("record= and replay= follow one run's requests in order; not with over=")
        return start_compared_batch(template, models, over, chosen, BatchOptions(concurrency=concurrency),
                                    names=names, max_rows=max_rows, expect=expect, evaluators=evaluators)
    if expect is not None or evaluators is not None:
        raise AgentcellError("expect= and evaluators= score the rows of a dataset; pass over=rows too")
    return start_comparison(template, models, chosen, names=names, record=record, replay=replay)


def start_comparison(
    template: Template | str,
    models: Sequence[Any],
    options: RunOptions,
    *,
    names: Sequence[str] | None = None,
    record: str | None = None,
    replay: str | None = None,
    starter: Callable[[str, RunOptions, Template | str], Run] | None = None,
) -> Comparison:
    """Start one run of `template` per model, all at once on the running loop; return the `Comparison`.

    `record` / `replay` give each model its own cassette (`cassette_for`). `starter` starts one model's
    run (default: the engine's `prepare(...).start()`); a front end passes its own to show each run.
    A model that cannot start is a `failed` result naming why; the others run.

    Raises (nothing started): `TemplateSyntaxError` (the template is checked once, for all), `AgentcellError`
    for an empty model list or both cassette flags.
    """
    from ..template import compile_template

    compiled = compile_template(template) if isinstance(template, str) else template
    if options.resume_from is not None:
        raise AgentcellError("compare starts a new run per model; resume_from= belongs to one run (resume that run)")
    if record is not None and replay is not None:
        raise AgentcellError("--record and --replay cannot be used together (replay cassettes, or record them)")
    chosen = entrants(models, names)
    comparison = Comparison([e.name for e in chosen])
    for entrant in chosen:
        try:
            own = replace(options, model=_cassette(entrant, record=record, replay=replay), run_id=None)
            run = starter(entrant.name, own, compiled) if starter is not None else prepare(compiled, own).start()
        except AgentcellError as exc:
            comparison._fail(entrant.name, entrant.name, str(exc))
            continue
        comparison._add(entrant.name, run)
    return comparison


def _cassette(entrant: Entrant, *, record: str | None, replay: str | None) -> Any:
    from ..providers.cassette import replay as replaying
    from ..providers.models import record as recording

    if replay is not None:
        return replaying(cassette_for(replay, entrant.name))
    if record is not None:
        return recording(cassette_for(record, entrant.name), entrant.model)
    return entrant.model


def compare_values(results: Mapping[str, RunResult]) -> list[dict[str, Any]]:
    """Every slot's value per model and whether they differ: `[{slot, values: {model: value}, differs}]`."""
    slots: list[str] = []
    for result in results.values():
        slots.extend(s for s in result.results if s not in slots)
    table = []
    for slot in slots:
        values = {name: result.results.get(slot) for name, result in results.items()}
        shown = {repr(v) for v in values.values()}
        table.append({"slot": slot, "values": values, "differs": len(shown) > 1})
    return table
