"""A batch's results: one `RowResult` per input row, in row order, and the `BatchResult` table.

`BatchResult.to_pandas()` has the input columns (with `keep`), one column per answer slot, then
`status`, `error`, `requests`, `tool_calls`, `input_tokens`, `output_tokens`, `cost` and `run_id`,
and, when the batch was scored (`expect=` / `evaluators=`), `passed` and one `<slot>:<evaluator>` column
per score (an evaluator that failed on a row reads `"error"` there); `to_records()` gives the same rows
as dicts, and `to_csv` / `to_json` / `to_parquet` let pandas do the writing. A row that failed (or was
never started because the batch was stopped) is a row like the others: its `status` says so and its
`error` says why.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic_core import to_jsonable_python

from ..formats.jsonsafe import scrub, scrub_text
from ..usage import RunStatus, Usage
from .scoring import Score, row_passed

if TYPE_CHECKING:
    from .regress import Comparison

RowStatus: TypeAlias = RunStatus | Literal["pending", "running", "not_started"]
"""A row's state: `pending`, `running`, a run's final status, or `not_started` (the batch stopped first)."""

GROUPS: dict[str, str] = {
    "completed": "done",
    "halted": "done",
    "failed": "failed",
    "budget_exhausted": "failed",
    "stopped": "stopped",
    "not_started": "not_started",
    "running": "running",
    "pending": "pending",
}
"""Row status → the progress bar's group (done / failed / stopped / running / pending / not_started)."""

USAGE_COLUMNS = ("requests", "tool_calls", "input_tokens", "output_tokens", "cost")
TAIL_COLUMNS = ("status", "error", *USAGE_COLUMNS, "run_id")


@dataclass(frozen=True, slots=True, kw_only=True)
class RowResult:
    """What one row produced, whatever way it ended."""

    index: int
    """The row's position in the input."""
    key: str
    """The row's content hash (what `--resume` matches, with the template hash)."""
    input: Mapping[str, Any] = field(default_factory=dict)
    """The row's fields."""
    status: RowStatus = "pending"
    results: Mapping[str, Any] = field(default_factory=dict)
    """Slot name → value, for every slot that finished."""
    error: str | None = None
    """Why the row did not complete (`None` when it did)."""
    usage: Usage = field(default_factory=Usage)
    run_id: str | None = None
    """The row's run (its journal file is `<run_id>.jsonl`); `None` for a row never started."""
    resumed: bool = False
    """True when the row was not run again: `--resume` found it done by an earlier batch."""
    scores: tuple[Score, ...] = ()
    """The evaluators' verdicts on the row (empty: the batch is not scored, or the row never started)."""
    duration: float | None = None
    """Seconds the row's run took (a resumed row keeps the duration of the run that did it)."""

    @property
    def passed(self) -> bool | None:
        """Whether every check passed (`None`: not scored, or an evaluator failed and none failed the row)."""
        return row_passed(self.scores) if self.scores else None

    @property
    def group(self) -> str:
        """The progress bar's group for this row's status."""
        return GROUPS[self.status]

    @property
    def finished(self) -> bool:
        return self.status not in ("pending", "running")


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchResult:
    """Every row of a batch, in input order, and how the batch ended."""

    rows: tuple[RowResult, ...]
    slots: tuple[str, ...]
    """The template's answer slots (one column each)."""
    keep: bool = False
    """Whether the input columns come first in the table."""
    status: Literal["completed", "stopped"] = "completed"
    """`stopped` when Stop, `--max-cost` or an error ended the batch before every row ran."""
    reason: str | None = None
    """Why the batch stopped early (`None` when every row ran)."""
    template_sha256: str = ""
    expect: Mapping[str, str] = field(default_factory=dict)
    """Slot → the input column holding its expected value (`expect=` / `--expect`)."""
    comparison: Comparison | None = None
    """This batch against its baseline (`baseline=` / `--baseline`), when it had one."""

    @property
    def counts(self) -> dict[str, int]:
        """Rows per status."""
        return dict(Counter(row.status for row in self.rows))

    @property
    def usage(self) -> Usage:
        """Totals over every row (rows restored by `--resume` included)."""
        total = Usage()
        for row in self.rows:
            total = total + row.usage
        return total

    @property
    def columns(self) -> list[str]:
        inputs = [c for c in dict.fromkeys(k for row in self.rows for k in row.input)] if self.keep else []
        return [*(_input_name(c, self.slots) for c in inputs), *self.slots, *TAIL_COLUMNS, *self.score_columns]

    @property
    def score_columns(self) -> list[str]:
        """`passed` and one `<slot>:<evaluator>` column per score, when any row was scored."""
        names = list(dict.fromkeys(s.column for row in self.rows for s in row.scores))
        return ["passed", *names] if names else []

    def summary(self) -> dict[str, Any]:
        """The scores as numbers: pass rate, means per evaluator / slot / column, failures (`summary.py`),
        and `baseline` (improved / regressed / unchanged counts) when the batch had one."""
        from .summary import summarize

        numbers = summarize(self.rows)
        if self.comparison is not None:
            c = self.comparison
            numbers["baseline"] = {"improved": len(c.improved), "regressed": len(c.regressed),
                                   "unchanged": len(c.unchanged), "new": len(c.new), "line": c.line}
        return numbers

    def compare(self, other: BatchResult | Any) -> Comparison:
        """This batch against `other` (an earlier `BatchResult` or `Batch` over the same rows): which rows
        improved, regressed or stayed unchanged (`.improved`, `.regressed`, `.unchanged`, `.to_pandas()`)."""
        from .regress import compare

        return compare(self.rows, _rows_of(other), self.slots)

    def report(self, name: str = "agentcell batch") -> Any:
        """The scores as a pydantic-evals `EvaluationReport` (its printers, its Logfire export); needs
        `agentcell[evals]`. Rows that did not complete are its failures."""
        from .evals_report import evaluation_report

        return evaluation_report(self, name)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per row, in input order, with the table's columns."""
        scored = self.score_columns
        return [self._record(row, scored) for row in self.rows]

    def _record(self, row: RowResult, scored: list[str]) -> dict[str, Any]:
        record: dict[str, Any] = {}
        if self.keep:
            record.update({_input_name(k, self.slots): v for k, v in row.input.items()})
        record.update({slot: row.results.get(slot) for slot in self.slots})
        usage = row.usage
        record.update(status=row.status, error=row.error, requests=usage.requests, tool_calls=usage.tool_calls,
                      input_tokens=usage.input_tokens, output_tokens=usage.output_tokens, cost=usage.cost,
                      run_id=row.run_id)
        if scored:
            record.update(dict.fromkeys(scored))
            record["passed"] = row.passed
            record.update({s.column: s.value if s.error is None else "error" for s in row.scores})
        return record

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (pandas must be installed)."""
        import pandas as pd

        records = [{k: scrub_text(v)[0] if isinstance(v, str) else v for k, v in r.items()} for r in self.to_records()]
        return pd.DataFrame.from_records(records, columns=self.columns)  # text columns must be valid UTF-8

    def to_csv(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        """Write the table as CSV (JSON slot values as JSON text)."""
        _flat(self.to_pandas(), self.slots).to_csv(path, index=False, **kwargs)

    def to_json(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        """Write the table as a JSON array of records."""
        kwargs.setdefault("orient", "records")
        kwargs.setdefault("force_ascii", False)
        frame = self.to_pandas()
        for column in frame.columns:
            if frame[column].dtype == object:
                frame[column] = frame[column].map(_jsonable)
        frame.to_json(path, **kwargs)

    def to_parquet(self, path: str | os.PathLike[str], **kwargs: Any) -> None:
        """Write the table as Parquet (pyarrow); JSON slot values become JSON text."""
        _flat(self.to_pandas(), self.slots).to_parquet(path, index=False, **kwargs)

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {status}" for status, n in sorted(self.counts.items()))
        return f"<BatchResult {len(self.rows)} rows ({counts}); slots {list(self.slots)}; status={self.status!r}>"


def _rows_of(other: Any) -> tuple[RowResult, ...]:
    """The rows of a `BatchResult`, or of a `Batch` (finished or not)."""
    rows = getattr(other, "rows", None)
    if rows is None:
        raise TypeError(f"compare needs a BatchResult or a Batch, got {type(other).__name__}")
    return tuple(rows)


def _input_name(column: str, slots: tuple[str, ...]) -> str:
    """An input column that has a slot's name is kept as `<name>_input` (the slot's value wins the name)."""
    return f"{column}_input" if column in slots or column in TAIL_COLUMNS else column


def _flat(frame: Any, slots: tuple[str, ...]) -> Any:
    """`frame` with dict/list values as JSON text, so CSV and Parquet get one type per column."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].map(_cell)
    return out


def _cell(value: Any) -> Any:
    """One cell for CSV or Parquet: containers and bytes as JSON text, an object whose `str` raises as its repr."""
    if isinstance(value, dict | list | tuple | bytes):
        return _json_text(value)
    if value is None or isinstance(value, str | int | float):
        return value
    try:
        str(value)
    except Exception:  # a kept input whose __str__ raises would fail the whole file
        from .inputs import safe_repr

        return safe_repr(value)
    return value


def _jsonable(value: Any) -> Any:
    """`value` as JSON-ready data (valid UTF-8); what JSON cannot hold becomes its `repr` (see `_json_text`)."""
    from .inputs import safe_repr

    try:
        return scrub(to_jsonable_python(value, fallback=safe_repr))[0]
    except Exception:  # the user's value: whatever it raises, the cell gets its repr
        return scrub_text(safe_repr(value))[0]


def _json_text(value: Any) -> str:
    """`value` as JSON text for one cell; a kept input that JSON cannot hold (a cycle, thousands of levels deep,
    bytes that are not UTF-8) is written as its `repr` instead of failing the whole file."""
    return json.dumps(_jsonable(value), ensure_ascii=False)
