"""`BatchResult.report()`: the scores as pydantic-evals' own `EvaluationReport`, and its evaluators in `map`.

pydantic-evals is the `agentcell[evals]` extra; every release pins pydantic-ai-slim to its own version, so the
venvs under test get it with `scripts/evals-extra` (`--no-deps`, beside the pydantic-ai-slim under test). On CI
(`CI` set) a missing pydantic-evals fails these tests; elsewhere they are skipped. The error without it is
checked everywhere.
"""

from __future__ import annotations

import builtins
import importlib
import os
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentcell.batch import BatchError, map

from .conftest import last_prompt

pytestmark = pytest.mark.anyio

TEMPLATE = "Question {{ qid }}: what is {{ qid }} doubled? [[answer]]"
ROWS = [{"qid": i, "gold": str(2 * i)} for i in range(10)]


def evals(name: str) -> Any:
    """`pydantic_evals.<name>`: skipped where pydantic-evals is missing, but a failure on CI, which must run it."""
    if os.environ.get("CI", "").lower() in ("", "0", "false"):
        return pytest.importorskip(f"pydantic_evals.{name}")
    try:
        return importlib.import_module(f"pydantic_evals.{name}")
    except ImportError as exc:
        pytest.fail(f"CI must run the pydantic-evals tests, and pydantic-evals is not importable ({exc}); "
                    "scripts/setup and scripts/test-floor install it with scripts/evals-extra")


def model(right: set[int]) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        qid = int(re.search(r"Question (\d+)", last_prompt(messages)).group(1))  # type: ignore[union-attr]
        if qid == 9:
            raise RuntimeError("model down")
        yield str(2 * qid) if qid in right else "no idea"

    return FunctionModel(stream_function=stream, model_name="doubler")


async def test_report_is_pydantic_evals_own_and_prints_with_its_printer() -> None:
    evaluators = evals("evaluators")
    reporting = evals("reporting")
    from rich.console import Console

    def picky(output: Any, expected: Any, row: dict[str, Any]) -> bool:
        if row["qid"] == 7:
            raise ValueError("cannot judge row 7")
        return bool(output == expected)

    result = await map(TEMPLATE, ROWS, model=model({0, 1, 2, 3, 4, 5, 7}), expect={"answer": "gold"},
                       evaluators=[evaluators.EqualsExpected(), evaluators.IsInstance(type_name="str"), picky], journal=False)
    assert result.rows[0].passed is True and result.rows[6].passed is False
    report = result.report(name="doubling")
    assert isinstance(report, reporting.EvaluationReport)
    assert len(report.cases) == 9 and [f.name for f in report.failures] == ["row 9"]  # the row that failed
    case = report.cases[0]
    assert case.output == "0" and case.expected_output == "0" and case.inputs == ROWS[0]
    assert case.assertions["EqualsExpected"].value is True
    seven = report.cases[7]
    assert [f.error_message for f in seven.evaluator_failures] == ["ValueError: cannot judge row 7"]
    console = Console(width=200, record=True)
    report.print(console=console, include_input=True, include_output=True)
    text = console.export_text()
    assert "Evaluation Summary: doubling" in text and "row 3" in text


async def test_report_without_pydantic_evals_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_evals(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pydantic_evals"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    result = await map(TEMPLATE, ROWS[:2], model=model({0}), expect={"answer": "gold"}, journal=False)
    monkeypatch.setattr(builtins, "__import__", no_evals)
    with pytest.raises(BatchError, match=r"pip install 'agentcell\[evals\]'"):
        result.report()
