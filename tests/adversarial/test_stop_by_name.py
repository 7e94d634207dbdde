"""`%agent stop NAME` for whatever runs (issue 40, item 7).

Before: `%agent stop b` for a batch bound with `%%agent --over rows -o b` raised "'b' is not a run handle;
start a run with %%agent -o b" — suggesting what had just been done — because the name had to hold a
`RunHandle`. Now the name may hold anything that runs (a run, a batch, and any later kind the registry keeps:
whatever is a `LiveRun`), or be the id `%agent stop` gave an unbound run; a name that holds something else, or
nothing, gets a sentence that says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.batch import Batch
from tests.batch.conftest import Shouter

pytestmark = pytest.mark.anyio


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.user_ns["words"] = [f"w{i:02d}" for i in range(40)]
    shell.user_ns["slow"] = Shouter(pause=0.5, seed=3).model
    yield shell
    shell.run_line_magic("agent", "stop")


async def test_stop_by_name_stops_a_batch_bound_with_o(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "--over words -m slow -o b -q --concurrency 4", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["b"]
    assert isinstance(batch, Batch)
    stopped = ip.run_line_magic("agent", "stop b")  # before: UsageError "'b' is not a run handle"
    assert stopped == 1 and stopped.sentence() == "Stopped 1 run: b."
    result = await asyncio.wait_for(batch.wait(), 30)
    assert result.status == "stopped" and result.counts.get("not_started", 0) >= 30
    assert ip.run_line_magic("agent", "stop b").sentence() == "No run was going; nothing to stop."


async def test_stop_by_name_still_stops_a_run_and_by_id_an_unbound_batch(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o r -q -m offline:slow", "Explain photosynthesis.\n[[answer]]")
    assert ip.run_line_magic("agent", "stop r") == 1
    assert (await ip.user_ns["r"]).status == "stopped"
    ip.run_cell_magic("agent", "--over words -m slow -q --concurrency 2", "SHOUT: {{ item }} [[answer]]")
    batch = ip.user_ns["_agent_run"]
    assert ip.run_line_magic("agent", f"stop {batch.run_id}") == 1  # the id `%agent stop` names it by
    assert (await asyncio.wait_for(batch.wait(), 30)).status == "stopped"


async def test_any_kind_of_run_stops_by_name(ip: InteractiveShell) -> None:
    class Comparison:  # a kind of run the magic has never heard of: what it offers is all that counts
        run_id = "cmp-1"
        done = False
        loop = asyncio.get_running_loop()
        task = None

        def cancel(self) -> None:
            self.done = True

        def supersede(self) -> None:
            self.cancel()

    ip.user_ns["cmp"] = Comparison()
    assert ip.run_line_magic("agent", "stop cmp") == 1
    assert ip.user_ns["cmp"].done


@pytest.mark.parametrize(("setup", "name", "message"), [
    ("x = 3", "x", "'x' holds an int, not a run or a batch: there is nothing of it to stop"),
    ("", "nobody", "nothing running is called 'nobody': no variable of that name (bind a run or a batch with "
                   "-o nobody) and no run id of a run still kept"),
], ids=["not-a-run", "undefined"])
def test_a_name_that_holds_no_run_is_one_sentence(ip: InteractiveShell, setup: str, name: str, message: str) -> None:
    ip.run_cell(setup)
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("agent", f"stop {name}")
    assert str(caught.value) == message
