"""`BatchResult.report()`: a batch's scores as a pydantic-evals `EvaluationReport`.

Built with pydantic-evals' public classes only (`EvaluationReport`, `ReportCase`, `ReportCaseFailure`,
`EvaluationResult`, `EvaluatorFailure`, `EvaluatorSpec`), so its printers (`report.print()`,
`console_table()`) and its Logfire export work on it. A completed row is a case: its checks are
assertions, its numbers scores, its strings labels, its evaluator errors `evaluator_failures`. A row
that failed or stopped is a case failure; a row never started is left out.
"""

from __future__ import annotations

from typing import Any

from .errors import BatchError

EXTRA = "pip install 'agentcell[evals]'"


def evaluation_report(result: Any, name: str) -> Any:
    """`result` (a `BatchResult`) as an `EvaluationReport` named `name` (raises `BatchError` without pydantic-evals)."""
    try:
        from pydantic_evals.evaluators import EvaluationResult, EvaluatorFailure
        from pydantic_evals.evaluators.spec import EvaluatorSpec
        from pydantic_evals.reporting import EvaluationReport, ReportCase, ReportCaseFailure
    except ImportError as exc:
        raise BatchError(f"report() builds a pydantic-evals EvaluationReport, and pydantic-evals is not importable "
                         f"({exc}); {EXTRA}") from None
    slots = list(dict.fromkeys(s.slot for row in result.rows for s in row.scores)) or list(result.slots[-1:])
    cases, failures = [], []
    for row in result.rows:
        if row.status == "not_started":
            continue
        output, expected = _output(row, slots), _expected(row, slots, result.expect)
        if row.status not in ("completed", "halted"):
            failures.append(ReportCaseFailure(
                name=f"row {row.index}", inputs=dict(row.input), metadata=None, expected_output=expected,
                error_message=row.error or row.status, error_stacktrace=""))
            continue
        groups: dict[str, dict[str, Any]] = {"scores": {}, "labels": {}, "assertions": {}}
        broken = []
        for score in row.scores:
            label = score.name if len(slots) == 1 else score.column
            source = EvaluatorSpec(name=score.name, arguments=None)
            if score.error is not None:
                broken.append(EvaluatorFailure(name=label, error_message=score.error, error_stacktrace="",
                                               source=source))
                continue
            group = ("assertions" if isinstance(score.value, bool) else
                     "labels" if isinstance(score.value, str) else "scores")
            groups[group][label] = EvaluationResult(name=label, value=score.value, reason=score.reason, source=source)
        duration = row.duration or 0.0
        cases.append(ReportCase(
            name=f"row {row.index}", inputs=dict(row.input), metadata=None, expected_output=expected, output=output,
            metrics={"cost": row.usage.cost or 0.0, "requests": row.usage.requests}, attributes={},
            scores=groups["scores"], labels=groups["labels"], assertions=groups["assertions"],
            task_duration=duration, total_duration=duration, evaluator_failures=broken))
    return EvaluationReport(name=name, cases=cases, failures=failures)


def _output(row: Any, slots: list[str]) -> Any:
    return row.results.get(slots[0]) if len(slots) == 1 else {s: row.results.get(s) for s in slots}


def _expected(row: Any, slots: list[str], expect: Any) -> Any:
    if not expect:
        return None
    values = {s: row.input.get(expect[s]) for s in slots if s in expect}
    return values.get(slots[0]) if len(slots) == 1 else values
