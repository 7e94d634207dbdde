"""Scores per model: the model-selection table of a batch run on several models over the same rows.

`compare(template, models=[A, B], over=rows, expect=...)` (and `%%agent --models A,B --over rows --expect ...`)
run one scored batch per model. What a model choice needs, per model: the pass rate, the mean score per
evaluator, the cost, the median latency of a row and how many rows' runs failed. `model_numbers(rows)` gives
them for one model (the `summary.py` numbers plus cost and latency), `selection(...)` one row per model for
the table the widget, the saved output and `ComparedBatchResult.model_table()` show.

Cost follows `usage.format_cost`: unknown (no price for the model) is `—`, never `$0`; a total missing the
price of some rows is a lower bound and reads `~$0.012`.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from ..usage import UNKNOWN_COST, format_cost
from .results import RowResult
from .summary import summarize

FAILED_RUNS = frozenset({"failed", "budget_exhausted", "stopped"})
"""Row statuses that count as a failed run (a row never started is not the model's failure)."""


def model_numbers(rows: Sequence[RowResult]) -> dict[str, Any]:
    """One model's numbers: `summarize(rows)` plus `cost` (USD, known part), `cost_text`, `cost_complete`,
    `median_latency_s` (of the rows that ran) and `failed_runs` (rows whose run failed or was stopped)."""
    numbers = summarize(rows)
    ran = [r for r in rows if r.finished and r.status != "not_started"]
    priced = [r.usage.cost for r in ran if r.usage.cost is not None]
    complete = len(priced) == len(ran)
    cost = round(sum(priced), 12) if priced else None
    durations = [r.duration for r in ran if r.duration is not None and not r.resumed]
    numbers.update(
        cost=cost,
        cost_complete=complete,
        cost_text=cost_text(cost, complete=complete),
        median_latency_s=round(statistics.median(durations), 3) if durations else None,
        failed_runs=sum(1 for r in ran if r.status in FAILED_RUNS),
    )
    return numbers


def cost_text(cost: float | None, *, complete: bool) -> str:
    """`$0.012`; `~$0.012` when some rows had no price (the total is at least that); `—` when none had one."""
    shown = format_cost(cost)
    return shown if complete or shown == UNKNOWN_COST else f"~{shown}"


def selection(batches: Mapping[str, Sequence[RowResult]]) -> list[dict[str, Any]]:
    """One row per model, in the models' order: `model`, `rows`, `scored`, `passed`, `pass_rate`, `mean`
    (evaluator → mean score), `cost`, `cost_text`, `median_latency_s`, `failed_runs`, `failed_checks`."""
    table = []
    for name, rows in batches.items():
        n = model_numbers(rows)
        table.append({"model": name, "rows": n["rows"], "scored": n["scored"], "passed": n["passed"],
                      "pass_rate": n["pass_rate"], "mean": dict(n["mean"]["by_column"]), "cost": n["cost"],
                      "cost_text": n["cost_text"], "median_latency_s": n["median_latency_s"],
                      "failed_runs": n["failed_runs"], "failed_checks": len(n["failures"])})
    return table


def evaluator_columns(table: Sequence[Mapping[str, Any]]) -> list[str]:
    """The score columns (`<slot>:<evaluator>`) any model has, in first-seen order."""
    return list(dict.fromkeys(column for row in table for column in row["mean"]))


def pass_text(row: Mapping[str, Any]) -> str:
    """`20/30 (66.7%)`, or `—` before any row of the model is scored."""
    if not row["scored"]:
        return "—"
    return f"{row['passed']}/{row['scored']} ({row['pass_rate'] * 100:.1f}%)"


def latency_text(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.2f} s"


def selection_cells(table: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The table as text: its header and one row of cells per model (what the saved output and the repr show;
    the widget's js/src/batch/models.js builds the same cells)."""
    columns = evaluator_columns(table)
    header = ["model", "pass rate", *(f"mean {c}" for c in columns), "cost", "median latency", "failed runs"]
    body = []
    for row in table:
        means = [("—" if row["mean"].get(c) is None else f"{row['mean'][c]:.3g}") for c in columns]
        body.append([row["model"], pass_text(row), *means, row["cost_text"], latency_text(row["median_latency_s"]),
                     str(row["failed_runs"])])
    return header, body
