"""Invalid tool calls and invalid typed answers are fed back within the slot's budget, not pydantic-ai's 1.

Before: two bad tool calls in a row (wrong argument types) or a typed answer invalid twice failed the
run with "exceeded max retries count of 1" / "Exceeded maximum output retries (1)" while the slot had
18 requests left. After: the retries a slot allows default to its request budget (`max_iter`, else
the ceiling), so only the budget ends it; `retries=N` on the slot lowers that.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentcell.engine import start_run
from agentcell.errors import TemplateSyntaxError
from agentcell.template import compile_template
from tests.engine.conftest import Call, Final, Script, slot, template

pytestmark = pytest.mark.anyio


def lookup(code: int) -> str:
    """Look a record up by its number."""
    return f"record {code}"


async def _result(script: Script, tpl: Any, tools: list[Any] = ()) -> Any:  # type: ignore[assignment]
    return await start_run(tpl, model=script.model, tools=list(tools), journal=False).wait()


async def test_two_ill_typed_calls_in_a_row_are_fed_back() -> None:
    script = Script([Call("lookup", {"code": "abc"})], [Call("lookup", {"code": "xyz"})], [Call("lookup", {"code": 7})], ["record 7"])
    result = await _result(script, template(slot("a", use_tools=True)), [lookup])
    assert (result.status, result.answer, len(script.requests)) == ("completed", "record 7", 4)


async def test_unknown_tool_names_three_times_are_fed_back() -> None:
    script = Script([Call("nope")], [Call("nada")], [Call("zilch")], ["fine"])
    result = await _result(script, template(slot("a", use_tools=True)), [lookup])
    assert (result.status, result.answer) == ("completed", "fine")


async def test_typed_answer_invalid_twice_is_fed_back() -> None:
    script = Script([Final("abc")], [Final("def")], [Final(3)])
    result = await _result(script, template(slot("n", "int")))
    assert (result.status, result.answer) == ("completed", 3)


async def test_retries_option_lowers_the_budget() -> None:
    script = Script([Final("abc")], [Final("def")], [Final(3)])
    result = await _result(script, "How many?\n[[int:n|retries=1]]")
    assert result.status == "failed"
    assert result.error == (
        "slot 'n' gave up: Exceeded maximum output retries (1) (each invalid tool call or answer was fed back "
        "to the model; set retries= on the slot to allow more)"
    )


async def test_endless_invalid_calls_end_at_the_request_budget() -> None:
    script = Script([Call("lookup", {"code": "never a number"})], repeat_last=True)
    result = await _result(script, template(slot("a", use_tools=True, max_iter=3)), [lookup])
    assert result.status == "budget_exhausted" and len(script.requests) == 3


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("retries=-1", "option 'retries' expects a whole number of at least 0, got -1"),
        ("retries=many", "option 'retries' expects a whole number of at least 0, got 'many'"),
    ],
    ids=["negative", "word"],
)
def test_retries_option_is_checked(written: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxError, match=message):
        compile_template(f"[[int:n|{written}]]")
