"""Regressions: a batch's scores against an earlier batch over the same rows (`BatchResult.compare`).

Rows are matched by content (the row key `--resume` uses), so a reordered or extended input still
matches; a row of the new batch that the earlier one lacks is `new`. A row improved when its merit
went up: it passes now and did not (or, for rows without checks, its mean score rose); it regressed
when its merit went down; otherwise it is unchanged (another wording of the same verdict included).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from .scoring import Score, row_passed


class RowResult(Protocol):
    """What a comparison reads of a row (a `results.RowResult`)."""

    @property
    def index(self) -> int: ...
    @property
    def key(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def results(self) -> Mapping[str, Any]: ...
    @property
    def scores(self) -> tuple[Score, ...]: ...


Change = Literal["improved", "regressed", "unchanged", "new"]


def merit(row: RowResult) -> float | None:
    """How good a row's verdict is: 1/0 for pass/fail, else its mean numeric score (`None`: not scored)."""
    verdict = row_passed(row.scores)
    if verdict is not None:
        return 1.0 if verdict else 0.0
    numbers = [n for n in (s.number for s in row.scores) if n is not None]
    return sum(numbers) / len(numbers) if numbers else None


def classify(now: RowResult, before: RowResult | None) -> Change:
    """One row's change from `before` (the earlier batch's row with the same content) to `now`."""
    if before is None:
        return "new"
    a, b = merit(before), merit(now)
    if a is None or b is None or a == b:
        return "unchanged"
    return "improved" if b > a else "regressed"


def pair(rows: Sequence[RowResult], earlier: Sequence[RowResult]) -> list[RowResult | None]:
    """For each row of `rows`, the earlier batch's row with the same content (in order when repeated), or `None`."""
    pool: dict[str, deque[RowResult]] = defaultdict(deque)
    for row in earlier:
        pool[row.key].append(row)
    return [pool[row.key].popleft() if pool.get(row.key) else None for row in rows]


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """A batch against an earlier one: each row's change, and the changed rows side by side."""

    improved: list[int] = field(default_factory=list)
    """Indexes (in the newer batch) of the rows that got better."""
    regressed: list[int] = field(default_factory=list)
    unchanged: list[int] = field(default_factory=list)
    new: list[int] = field(default_factory=list)
    """Rows the earlier batch did not have."""
    pairs: tuple[tuple[RowResult, RowResult], ...] = ()
    """(now, before) for every changed row, in row order."""
    slots: tuple[str, ...] = ()
    kind: Literal["comparison"] = "comparison"

    @property
    def line(self) -> str:
        """`12 improved, 3 regressed, 485 unchanged` (and the new rows, if any)."""
        text = f"{len(self.improved)} improved, {len(self.regressed)} regressed, {len(self.unchanged)} unchanged"
        return text + (f", {len(self.new)} new" if self.new else "")

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per changed row: its index, the change, and both answers, verdicts and scores."""
        out = []
        changes = {**dict.fromkeys(self.improved, "improved"), **dict.fromkeys(self.regressed, "regressed")}
        for now, before in self.pairs:
            record: dict[str, Any] = {"row": now.index, "change": changes.get(now.index, "unchanged")}
            for slot in self.slots:
                record[f"{slot}_before"] = before.results.get(slot)
                record[f"{slot}_now"] = now.results.get(slot)
            record["passed_before"] = row_passed(before.scores)
            record["passed_now"] = row_passed(now.scores)
            for score in before.scores:
                record[f"{score.column}_before"] = score.value if score.error is None else "error"
            for score in now.scores:
                record[f"{score.column}_now"] = score.value if score.error is None else "error"
            out.append(record)
        return out

    def to_pandas(self) -> Any:
        """The changed rows as a DataFrame (pandas must be installed)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.to_records())

    def __repr__(self) -> str:
        return f"<Comparison {self.line}>"


def compare(rows: Sequence[RowResult], earlier: Sequence[RowResult], slots: tuple[str, ...]) -> Comparison:
    """`rows` (a newer batch) against `earlier` (see the module docstring)."""
    groups: dict[Change, list[int]] = {"improved": [], "regressed": [], "unchanged": [], "new": []}
    pairs = []
    for now, before in zip(rows, pair(rows, earlier), strict=True):
        if not now.scores and now.status == "not_started":
            continue
        change = classify(now, before)
        groups[change].append(now.index)
        if before is not None and change in ("improved", "regressed"):
            pairs.append((now, before))
    return Comparison(improved=groups["improved"], regressed=groups["regressed"], unchanged=groups["unchanged"],
                      new=groups["new"], pairs=tuple(pairs), slots=slots)
