"""Scores per row: a batch's expected columns and evaluators, applied to each row as it finishes.

`map(..., expect={"answer": "gold"}, evaluators=[...])` / `%%agent --over df --expect answer=gold`.
An evaluator is either

* a plain callable `(output, expected, row) -> bool | float | str | dict` (sync or `async def`):
  `output` is the slot's answer, `expected` the row's expected cell (`None` when the row has none),
  `row` the row's fields; a `bool` is a pass/fail check, a number a score, a `str` a label, a `dict`
  several of them by name; or
* a pydantic-evals `Evaluator` (`EqualsExpected`, `Contains`, `IsInstance`, `LLMJudge`, a subclass),
  given an `EvaluatorContext` of the row (pydantic-evals is needed only then: `agentcell[evals]`).

Each evaluator runs once per expected slot (without `expect`: once, on the template's last answer
slot). With `expect` and no `evaluators` each expected slot gets the default check, `equals`
(`expect.same`: type-aware). Evaluators never stop the batch: one that raises (or returns
something that is not a verdict) gives that row's score an `error`, and every other score stands.
A row that did not complete scores `False` on every check (its reason says why); a row never started
is not scored.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from .errors import BatchError
from .expect import missing, same
from .inputs import Row

DEFAULT_CHECK = "equals"
"""The name of the default check (a score column reads `answer:equals`)."""
Verdict = bool | float | str
"""What one score holds: a check's pass/fail, a number, or a label."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    """One evaluator's verdict on one slot of one row."""

    name: str
    """The evaluator's name (a function's name, an `Evaluator`'s default name, a key of a dict it returned)."""
    slot: str
    value: Verdict | None = None
    """`True`/`False` for a check, a number for a score, a string for a label; `None` when it failed."""
    reason: str | None = None
    error: str | None = None
    """Why the evaluator gave no verdict (it raised, or returned something that is not one)."""
    kind: Literal["score"] = "score"

    @property
    def column(self) -> str:
        """The score's column in the results table: `<slot>:<name>`."""
        return f"{self.slot}:{self.name}"

    @property
    def passed(self) -> bool | None:
        """The check's outcome (`None`: not a check, or it failed)."""
        return self.value if isinstance(self.value, bool) else None

    @property
    def number(self) -> float | None:
        """The verdict as a number for means (`True` is 1, `False` 0; a label or an error: `None`)."""
        return None if isinstance(self.value, str) or self.value is None else float(self.value)


def row_passed(scores: Sequence[Score]) -> bool | None:
    """A row passes when every check passed: `False` if one failed, `None` if one errored or there were none."""
    verdicts = [s.passed for s in scores]
    if False in verdicts:
        return False
    if any(s.error is not None for s in scores) or True not in verdicts:
        return None
    return True


@dataclass(frozen=True, slots=True)
class _Check:
    name: str
    fn: Any
    external: bool
    """A pydantic-evals `Evaluator` (run with an `EvaluatorContext`)."""
    asynchronous: bool


class Scorer:
    """A batch's expected columns and evaluators, checked once before any row starts."""

    def __init__(self, expect: Mapping[str, str], evaluators: Sequence[Any] | None,
                 slots: Sequence[tuple[str, str]]) -> None:
        """`slots`: the template's answer slots as (name, type), in order."""
        types = dict(slots)
        for slot, column in expect.items():
            if slot not in types:
                known = ", ".join(types) or "none"
                raise BatchError(f"expect names slot {slot!r}, which the template does not have (its slots: {known})")
            if not isinstance(column, str) or not column:
                raise BatchError(f"expect maps slot {slot!r} to {column!r}; give the name of a column of the rows")
        if not expect and not slots:
            raise BatchError("evaluators need an answer slot to check, and the template has none")
        self.expect = dict(expect)
        """Slot → the column of the rows that holds its expected value."""
        targets = list(expect) if expect else [slots[-1][0]]
        self.targets = tuple((slot, types[slot]) for slot in targets)
        self.checks = tuple(_checks(evaluators))
        self.asynchronous = any(c.asynchronous for c in self.checks)
        """Whether a row's scores need awaiting (an `async def` or a pydantic-evals evaluator)."""

    @property
    def columns(self) -> list[str]:
        """The score columns every scored row has (a dict-returning evaluator may add more)."""
        return [f"{slot}:{c.name}" for slot, _t in self.targets for c in self.checks]

    def check_rows(self, rows: Sequence[Row]) -> None:
        """Raise `BatchError` when no row has an expected column (a misspelt `--expect`)."""
        for slot, column in self.expect.items():
            if rows and not any(column in r.fields for r in rows):
                have = ", ".join(sorted(str(k) for k in rows[0].fields)) or "none"
                raise BatchError(f"expect {slot}={column}: no row has a column {column!r} (the rows' columns: {have})")

    def expected(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """Slot → the row's expected value (`None`: the row has none)."""
        out = {}
        for slot, column in self.expect.items():
            value = fields.get(column)
            out[slot] = None if missing(value) else value
        return out

    def unanswered(self, status: str, error: str | None) -> tuple[Score, ...]:
        """The scores of a row that did not complete: every check fails, saying why."""
        reason = f"the row {status}" + (f": {error}" if error else "")
        return tuple(Score(name=c.name, slot=slot, value=False, reason=reason)
                     for slot, _t in self.targets for c in self.checks)

    def score(self, fields: Mapping[str, Any], results: Mapping[str, Any]) -> tuple[Score, ...]:
        """A completed row's scores, when every evaluator is synchronous."""
        expected = self.expected(fields)
        out: list[Score] = []
        for slot, slot_type in self.targets:
            for check in self.checks:
                out.extend(_call_sync(check, slot, slot_type, results.get(slot), expected.get(slot), fields))
        return tuple(out)

    async def score_async(self, index: int, fields: Mapping[str, Any], results: Mapping[str, Any],
                          duration: float) -> tuple[Score, ...]:
        """A completed row's scores, awaiting the evaluators that need it (one after the other)."""
        expected = self.expected(fields)
        out: list[Score] = []
        for slot, slot_type in self.targets:
            for check in self.checks:
                output, want = results.get(slot), expected.get(slot)
                if not check.asynchronous:
                    out.extend(_call_sync(check, slot, slot_type, output, want, fields))
                    continue
                try:
                    if check.external:
                        raw = await check.fn.evaluate_async(_context(index, fields, output, want, duration))
                    else:
                        raw = await check.fn(output, want, dict(fields))
                except Exception as exc:  # the evaluator's failure is that score's, never the batch's
                    out.append(Score(name=check.name, slot=slot, error=f"{type(exc).__name__}: {exc}"))
                    continue
                out.extend(_verdicts(check.name, slot, raw))
        return tuple(out)


def _checks(evaluators: Sequence[Any] | None) -> list[_Check]:
    if evaluators is None:
        return [_Check(DEFAULT_CHECK, None, external=False, asynchronous=False)]
    if callable(evaluators) or _is_external(evaluators):
        evaluators = [evaluators]
    checks: list[_Check] = []
    taken: set[str] = set()
    for i, fn in enumerate(evaluators):
        external = _is_external(fn)
        if not external and not callable(fn):
            raise BatchError(f"evaluator {i} is a {type(fn).__name__}; give a function (output, expected, row) -> "
                             "bool | float | dict, or a pydantic-evals Evaluator")
        name = _name(fn, external, i)
        while name in taken:
            name += "_2"
        taken.add(name)
        asynchronous = external or inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None))  # noqa: B004 — an object with an `async def __call__`
        checks.append(_Check(name, fn, external=external, asynchronous=asynchronous))
    return checks


def _is_external(fn: Any) -> bool:
    """A pydantic-evals `Evaluator` (checked only if pydantic-evals was imported: nothing else can make one)."""
    module = sys.modules.get("pydantic_evals.evaluators")
    return module is not None and isinstance(fn, module.Evaluator)


def _name(fn: Any, external: bool, i: int) -> str:
    if external:
        return str(fn.get_default_evaluation_name())
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return f"check{i}" if name == "<lambda>" else str(name)


def _call_sync(check: _Check, slot: str, slot_type: str, output: Any, expected: Any,
               fields: Mapping[str, Any]) -> list[Score]:
    if check.fn is None:  # the default check: no expected value, no score
        return [] if expected is None else [Score(name=check.name, slot=slot, value=same(output, expected, slot_type))]
    try:
        raw = check.fn(output, expected, dict(fields))
        if inspect.isawaitable(raw):
            _close(raw)
            raise TypeError("it returned an awaitable; make it an `async def` so the batch awaits it")
    except Exception as exc:  # the evaluator's failure is that score's, never the batch's
        return [Score(name=check.name, slot=slot, error=f"{type(exc).__name__}: {exc}")]
    return _verdicts(check.name, slot, raw)


def _close(awaitable: Awaitable[Any]) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


def _verdicts(name: str, slot: str, raw: Any) -> list[Score]:
    """An evaluator's return value as scores: one, or one per key of a mapping."""
    if isinstance(raw, Mapping):
        return [score for key, value in raw.items() for score in _verdicts(str(key), slot, value)]
    reason = None
    if hasattr(raw, "value") and hasattr(raw, "reason") and not isinstance(raw, bool | int | float | str):
        raw, reason = raw.value, raw.reason  # pydantic-evals' EvaluationReason
    if isinstance(raw, bool | str):
        return [Score(name=name, slot=slot, value=raw, reason=reason)]
    if isinstance(raw, int | float) and math.isfinite(raw):
        return [Score(name=name, slot=slot, value=float(raw), reason=reason)]
    shown = repr(raw)[:80]
    return [Score(name=name, slot=slot, error=f"returned {shown}; an evaluator returns a bool, a finite number, "
                                                "a label (str) or a dict of them")]


def _context(index: int, fields: Mapping[str, Any], output: Any, expected: Any, duration: float) -> Any:
    """The pydantic-evals `EvaluatorContext` of one row's slot (no span tree: agentcell records no spans)."""
    from pydantic_evals.evaluators import EvaluatorContext
    from pydantic_evals.otel import SpanTreeRecordingError

    return EvaluatorContext(
        name=f"row {index}", inputs=dict(fields), metadata=None, expected_output=expected, output=output,
        duration=duration, _span_tree=SpanTreeRecordingError("agentcell batches record no spans"),
        attributes={}, metrics={},
    )


def with_scores(row: Any, scores: tuple[Score, ...]) -> Any:
    """`row` (a `RowResult`) with its scores."""
    return replace(row, scores=scores)
