"""`%%agent --models A,B` and `%agent fork` in an in-process shell with a running loop (as in a kernel)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.batch.compare import Comparison
from agentcell.frontends.handle import RunHandle

from .conftest import Counted

pytestmark = pytest.mark.anyio

CELL = "Find it. [[answer|use_tools=true]]"


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.user_ns.update(careful=Counted("careful", rounds=2).model(), hasty=Counted("hasty", rounds=0).model())
    shell.run_cell(
        "from agentcell import readonly\n"
        "@readonly\n"
        "def lookup(q: str) -> str:\n"
        "    '''Look q up.'''\n"
        "    return f'result for {q}'\n"
    )
    yield shell
    shell.run_line_magic("agent", "stop")


async def test_models_runs_the_cell_once_per_model_and_binds_the_comparison(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--models careful,hasty -q -o cmp", CELL)
    comparison = ip.user_ns["cmp"]
    assert isinstance(comparison, Comparison) and comparison.models == ("careful", "hasty")
    await comparison
    assert comparison.results["careful"].answer == "careful read: result for item 1"
    assert comparison.results["hasty"].answer == "hasty read: nothing"


async def test_models_with_record_writes_one_cassette_per_model(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_cell_magic("agent", f"--models careful,hasty -q -o cmp --record {tmp_path / 'demo.json'}", CELL)
    await ip.user_ns["cmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.careful.json", "demo.hasty.json"]
    ip.run_cell_magic("agent", f"--models careful,hasty -q -o again --replay {tmp_path / 'demo.json'}", CELL)
    again = await ip.user_ns["again"]
    assert again.results["careful"].answer == "careful read: result for item 1"


async def test_a_model_name_that_names_nothing_is_one_line(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="no notebook variable 'carefull' holds a pydantic-ai Model"):
        ip.run_cell_magic("agent", "--models careful,carefull", CELL)


async def test_agent_fork_edits_a_tool_result_and_binds_the_fork(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-m careful -q -o run", CELL)
    await ip.user_ns["run"]
    ip.run_line_magic("agent", "fork run --round 2 --result lookup=EDITED -o forked")
    forked = ip.user_ns["forked"]
    assert isinstance(forked, RunHandle)
    result = await forked
    assert result.answer == "careful read: EDITED" and result.forked_from == ip.user_ns["run"].run_id


@pytest.mark.parametrize(("line", "says"), [
    ("fork run --round 9", "has no round 9 to fork [[answer]] at: pick a round from 0 to 2"),
    ("fork run --round 2 --result c7=x", "round 2 of [[answer]] has no tool call 'c7'; its calls are c1 (lookup)"),
    ("fork nosuch --round 1", "%agent fork nosuch: no run by that name"),
    ("fork run", "the following arguments are required: --round"),
    ("fork run --round 1 --result lookup", "--result takes TOOL=VALUE or CALL_ID=VALUE"),
])
async def test_agent_fork_says_what_is_wrong_in_one_line(ip: InteractiveShell, line: str, says: str) -> None:
    ip.run_cell_magic("agent", "-m careful -q -o run", CELL)
    await ip.user_ns["run"]
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("agent", line)
    assert says in str(caught.value) and "\n" not in str(caught.value)


async def test_models_with_over_runs_every_row_on_every_model(ip: InteractiveShell) -> None:
    ip.user_ns["items"] = ["a", "b"]
    ip.run_cell_magic("agent", "--models careful,hasty --over items -q -o cmp", "Item {{ item }}. " + CELL)
    result = await ip.user_ns["cmp"]
    assert [(r["row"], r["model"], r["status"]) for r in result.to_records()] == [
        (0, "careful", "completed"), (0, "hasty", "completed"), (1, "careful", "completed"), (1, "hasty", "completed")]


async def test_the_lesson_export_holds_a_run_and_its_fork(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_cell_magic("agent", "-m careful -q -o run", CELL)
    await ip.user_ns["run"]
    ip.run_line_magic("agent", "fork run --round 2 --result lookup=EDITED -o forked")
    await ip.user_ns["forked"]
    path = ip.run_line_magic("agent", f"export run forked {tmp_path / 'lesson.html'}")
    text = Path(path).read_text()
    assert "fork point" in text and f"forked from {ip.user_ns['run'].run_id} at round 2" in text
    assert "careful read: result for item 1" in text and "careful read: EDITED" in text


async def test_agent_fork_of_a_result_is_shown_like_a_handles(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-m careful -q -o run", CELL)
    ip.user_ns["res"] = await ip.user_ns["run"]  # what `-o res` of a --wait cell binds
    ip.run_line_magic("agent", "fork res --round 1 -o again")
    forked = ip.user_ns["again"]
    assert isinstance(forked, RunHandle)
    assert (await forked).answer == "careful read: result for item 1" and forked.result().fork_round == 1
