"""`RunResult` read by slot name, as struckdown's result is."""

from __future__ import annotations

import json

import pytest

from agentcell.result import RunResult


def test_a_result_reads_by_slot_name_in_run_order() -> None:
    result = RunResult(run_id="r", status="completed", results={"plan": {"steps": [1, 2]}, "answer": "Done."},
                       answer="Done.")
    assert result["plan"] == {"steps": [1, 2]} and result["answer"] == "Done."
    assert list(result.keys()) == list(result) == ["plan", "answer"]
    assert dict(result) == {"plan": {"steps": [1, 2]}, "answer": "Done."} == dict(result.outputs)
    assert "plan" in result and "missing" not in result
    assert result.response == "Done."  # the last slot's value
    with pytest.raises(KeyError):
        result["missing"]


def test_an_empty_result_has_no_response_and_stays_a_plain_value() -> None:
    empty = RunResult(run_id="r", status="stopped")
    assert empty.response is None and list(empty) == [] and bool(empty)  # truthiness unchanged: no __len__
    assert json.loads(empty.to_json())["results"] == {}
    assert repr(empty).startswith("RunResult(status='stopped'")
