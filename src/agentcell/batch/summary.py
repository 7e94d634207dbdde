"""A batch's scores as numbers: pass rate, means per evaluator, per slot and per score column, failures.

`summarize(rows)` is a plain function of the rows so a grouping (per model, when rows carry one) is
`summarize` per group; `BatchResult.summary()` and the batch widget's summary line call it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from .scoring import Score, row_passed


class Scored(Protocol):
    """What `summarize` reads of a row (a `RowResult`)."""

    @property
    def index(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def scores(self) -> tuple[Score, ...]: ...


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return round(sum(items) / len(items), 6) if items else None


def summarize(rows: Sequence[Scored]) -> dict[str, Any]:
    """The numbers of a batch's scores (rows not scored, e.g. not started or still running, are left out).

    `pass_rate` is passed / scored rows (a row whose evaluator errored counts as scored and not passed);
    `failures` are the indexes of the rows that did not pass, `errors` of the rows with an evaluator error.
    """
    scored = [r for r in rows if r.scores]
    verdicts = [(r.index, row_passed(r.scores)) for r in scored]
    passed = sum(1 for _i, v in verdicts if v is True)
    by_column: dict[str, list[float]] = defaultdict(list)
    by_name: dict[str, list[float]] = defaultdict(list)
    by_slot: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    for row in scored:
        for score in row.scores:
            if score.error is not None:
                errors[score.column] += 1
            number = score.number
            if number is None:
                continue
            by_column[score.column].append(number)
            by_name[score.name].append(number)
            by_slot[score.slot].append(number)
    return {
        "rows": len(rows),
        "scored": len(scored),
        "passed": passed,
        "pass_rate": round(passed / len(scored), 6) if scored else None,
        "failures": [i for i, v in verdicts if v is False],
        "errors": [r.index for r in scored if any(s.error is not None for s in r.scores)],
        "mean": {"by_evaluator": {k: _mean(v) for k, v in by_name.items()},
                 "by_slot": {k: _mean(v) for k, v in by_slot.items()},
                 "by_column": {k: _mean(v) for k, v in by_column.items()}},
        "evaluator_errors": dict(errors),
    }


def summary_line(numbers: dict[str, Any]) -> str:
    """`20/30 passed (66.7%); 10 failed; equals 0.667` — the widget's and the repr's line."""
    if not numbers["scored"]:
        return "no scores yet"
    parts = [f"{numbers['passed']}/{numbers['scored']} passed ({numbers['pass_rate'] * 100:.1f}%)"]
    if numbers["failures"]:
        parts.append(f"{len(numbers['failures'])} failed")
    if numbers["errors"]:
        parts.append(f"{len(numbers['errors'])} with evaluator errors")
    means = ", ".join(f"{k} {v:.3g}" for k, v in numbers["mean"]["by_column"].items() if v is not None)
    if means:
        parts.append(f"mean {means}")
    return "; ".join(parts)
