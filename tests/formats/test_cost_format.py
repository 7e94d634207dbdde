"""A cost reads as what it is: `$0.0000045`, not `$0.0000`; unknown is `—`, never `$0.00` (one table with the widget)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcell.usage import cost_exact, format_cost

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "cost-format.json").read_text(encoding="utf-8")
)["cases"]


def _value(raw: Any) -> Any:
    return float("nan") if raw == "NaN" else raw


@pytest.mark.parametrize("case", CASES, ids=lambda c: str(c["cost"]))
def test_cost_text_and_exact_value(case: dict[str, Any]) -> None:
    assert format_cost(_value(case["cost"])) == case["text"]
    assert cost_exact(_value(case["cost"])) == case["exact"]


def test_a_fifteen_token_request_is_not_shown_as_free() -> None:
    assert format_cost(10 * 0.15e-6 + 5 * 0.6e-6) == "$0.0000045"
