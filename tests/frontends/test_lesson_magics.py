"""Lesson mode from a cell: `--step`, `--predict`, `--inject`, the cell shown in the teaching view and the
lesson, and `%agent export` of a run still going waiting for it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.events import ProcessingComplete, StepPaused
from agentcell.frontends.handle import RunHandle
from agentcell.frontends.jupyter.export_wait import export_transformer, size_text

CELL = "Who leads {{ code }}?\n[[answer|use_tools=true]]"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    monkeypatch.setenv("AGENTCELL_TEST_KEY", "sk-lessonsecret123456789")
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.run_cell(
        "from agentcell import readonly\n"
        "@readonly\n"
        "def lookup(code: str) -> str:\n"
        "    '''Look a module up by its code.'''\n"
        "    return f'{code}: led by Ada'\n"
        "code = 'PSYC605'\n"
        "api_key = 'not-for-students'\n"
    )
    yield shell
    shell.run_line_magic("agent", "stop")


async def _at_pause(handle: RunHandle, after: int = 0) -> None:
    """Wait until the run sits at a pause numbered above `after` (or ended)."""
    async with asyncio.timeout(30):
        async for event in handle.run.events():
            paused = handle.paused
            if isinstance(event, ProcessingComplete) or (
                isinstance(event, StepPaused) and event.number > after and paused is not None
                and paused.number == event.number
            ):
                return


@pytest.mark.anyio
async def test_a_step_cell_pauses_and_the_widget_buttons_move_it(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o h -t lookup --step", CELL)
    handle = ip.user_ns["h"]
    await _at_pause(handle)
    assert handle.paused is not None and handle.paused.before == "request"
    assert handle.widget is not None
    handle.widget._dispatch_frontend({"kind": "step"})  # the Next button
    await _at_pause(handle, after=1)
    assert handle.paused is not None and handle.paused.summary == "paused before lookup(code='PSYC605')"
    handle.widget._dispatch_frontend({"kind": "go"})  # Run to end
    assert (await handle).status == "completed"


@pytest.mark.anyio
async def test_a_prediction_from_the_widget_is_kept_in_the_result(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o h -t lookup --predict", CELL)
    handle = ip.user_ns["h"]
    await _at_pause(handle)
    assert handle.paused is not None and handle.paused.predict
    handle.widget._dispatch_frontend({"kind": "predict", "does": "tool", "tool": "lookup"})
    handle.widget._dispatch_frontend({"kind": "predict", "does": "nonsense"})  # ignored
    handle.go()
    result = await handle
    assert result.predictions == ({"slot": "answer", "round": 1, "guess": {"does": "tool", "tool": "lookup"},
                                   "actual": {"does": "tool", "tool": "lookup"}, "right": True},)


@pytest.mark.anyio
async def test_the_widget_shows_the_cell_with_its_values_secrets_masked(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o h -t lookup --inject lookup=error",
                      "Who leads {{ code }}? key {{ api_key }}\n[[answer|use_tools=true]]")
    handle = ip.user_ns["h"]
    await handle
    source = handle.widget.source
    assert source["call"] == "%%agent -o h -t lookup --inject lookup=error"
    assert source["template"].startswith("Who leads {{ code }}?")
    assert dict(map(tuple, source["values"])) == {"code": "'PSYC605'", "api_key": "***"}
    assert "not-for-students" not in str(source)


def test_a_bad_inject_flag_is_one_usage_error(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match=r"--inject 'lookup=teapot': a tool \(lookup\) can be given"):
        ip.run_cell_magic("agent", "-t lookup --inject lookup=teapot", CELL)


@pytest.mark.anyio
async def test_export_of_a_running_run_waits_then_writes(
    ip: InteractiveShell, tmp_path: Path, capsys: Any
) -> None:
    ip.run_cell_magic("agent", "-o h -t lookup --inject model=slow:40", CELL)
    handle = ip.user_ns["h"]
    assert not handle.done
    out = tmp_path / "lesson.html"
    magics = ip.magics_manager.registry["AgentMagics"]
    await magics.agent_export(f"h {out}")
    assert handle.done and handle.status == "completed"
    text = out.read_text(encoding="utf-8")
    assert "Who leads {{ code }}?" in text and "%%agent -o h -t lookup --inject model=slow:40" in text
    said = capsys.readouterr().out.strip().splitlines()[-1]
    assert said == f"wrote {out} ({size_text(out.stat().st_size)})"


@pytest.mark.anyio
async def test_stop_still_works_while_an_export_waits(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_cell_magic("agent", "-o h -t lookup --inject model=slow:5", CELL)
    handle = ip.user_ns["h"]
    magics = ip.magics_manager.registry["AgentMagics"]
    export = asyncio.ensure_future(magics.agent_export(f"h {tmp_path / 'l.html'}"))
    await asyncio.sleep(0)
    assert not export.done()
    handle.cancel()  # the Stop button
    await export
    assert handle.status == "stopped" and (tmp_path / "l.html").exists()


@pytest.mark.parametrize(("cell", "expected"), [
    (["%agent export h out.html\n"],
     ["await get_ipython().magics_manager.registry['AgentMagics'].agent_export('h out.html')\n"]),
    (["x = 1\n", "%agent export a b l.html\n"],
     ["x = 1\n", "await get_ipython().magics_manager.registry['AgentMagics'].agent_export('a b l.html')\n"]),
    (["%agent show h\n"], None),
    (["  %agent export h o.html\n"], None),
    (["print('%agent export h o.html')\n"], None),
], ids=["alone", "after-code", "other-command", "indented", "in-a-string"])
def test_the_export_transformer_rewrites_only_export_lines(cell: list[str], expected: list[str] | None) -> None:
    assert export_transformer(cell) == (expected if expected is not None else cell)


def test_an_export_cell_runs_through_the_transformer(ip: InteractiveShell, tmp_path: Path) -> None:
    ip.run_cell_magic("agent", "-o r -t lookup", CELL)  # terminal mode: finished in the cell
    out = tmp_path / "a b.html"
    result = ip.run_cell(f"%agent export r '{out}'")
    assert result.success, result.error_in_exec
    assert out.exists()


def test_step_in_a_terminal_is_refused_in_one_sentence(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="--step and --predict need a notebook"):
        ip.run_cell_magic("agent", "-t lookup --step", CELL)  # no running loop: terminal IPython


@pytest.mark.anyio
async def test_show_with_step_is_moved_by_its_widget() -> None:
    import agentcell
    from agentcell.frontends.registry import PYTHON_RUNS

    widget = agentcell.show("Hi {{ who }} [[answer]]", model="offline:fast", step=True, context={"who": "Ada"},
                            journal=False)
    (handle,) = [h for h in PYTHON_RUNS.runs.values() if getattr(h, "widget", None) is widget]
    await _at_pause(handle)
    assert handle.paused is not None and handle.paused.before == "request"
    assert widget.source["call"] == "show(model='offline:fast', step=True)"
    widget._dispatch_frontend({"kind": "go"})
    assert (await handle).status == "completed"
