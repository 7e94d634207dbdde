"""`show()` from plain Python: which run a new one replaces, `stop_all()`, the static transcript, no loop.

The replaced run's provider request is proven closed by the OpenAI-compatible fixture server, which
sees each client disconnect (`tests/openai_server.py`).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentcell
from agentcell.frontends import marimo
from agentcell.frontends.handle import REPLACED
from agentcell.frontends.registry import PYTHON_RUNS
from agentcell.render.output import StaticTranscript, static_transcript
from tests.openai_server import FakeOpenAI, Reply, Text
from tests.providers.conftest import eventually

pytestmark = pytest.mark.anyio

SRC = Path(__file__).resolve().parents[2] / "src"
SLOW = Reply(Text("word " * 400, pieces=400, delay=0.02))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture(autouse=True)
def _no_runs_left() -> Iterator[None]:
    yield
    assert not [h for h in PYTHON_RUNS.runs.values() if not h.done]


def compat(server: FakeOpenAI) -> str:
    return f"openai-compat:fake-model@{server.base_url}"


def run_of(widget: agentcell.AgentWidget) -> agentcell.RunHandle:
    return next(h for h in PYTHON_RUNS.runs.values() if getattr(h, "widget", None) is widget)  # type: ignore[return-value]


def warnings_of(widget: agentcell.AgentWidget) -> list[str]:
    return [e["message"] for e in widget.wire_snapshot() if e["kind"] == "run_warning"]


async def test_show_again_with_the_same_key_replaces_the_run_and_closes_its_request(server: FakeOpenAI) -> None:
    server.script(SLOW, Reply(Text("Second answer.")))
    first = agentcell.show("Tell a long story [[answer]]", model=compat(server), key="story")
    old = run_of(first)
    await eventually(lambda: server.chat_requests and server.chat_requests[0].chunks_sent > 3)

    second = agentcell.show("Tell a long story [[answer]]", model=compat(server), key="story")
    new = run_of(second)
    assert old.superseded and not new.superseded
    result = await old
    assert result.status == "stopped" and first.status == "stopped"
    assert warnings_of(first) == [REPLACED] and warnings_of(second) == []
    request = await eventually(lambda: server.chat_requests[0] if server.chat_requests[0].disconnected_at else None)
    assert request.outcome == "disconnected"
    assert (await new).answer == "Second answer."
    assert [t for t in asyncio.all_tasks() if t.get_name().startswith("agentcell-")] == []


async def test_passing_the_earlier_widget_as_key_replaces_that_run(server: FakeOpenAI) -> None:
    server.script(SLOW, SLOW, Reply(Text("Third.")))
    first = agentcell.show("One [[answer]]", model=compat(server))
    second = agentcell.show("Two [[answer]]", model=compat(server))  # no key, no cell: replaces nothing
    await eventually(lambda: len(server.chat_requests) == 2)
    third = agentcell.show("Three [[answer]]", model=compat(server), key=first)
    assert (await run_of(first)).status == "stopped" and warnings_of(first) == [REPLACED]
    assert second.status == "running"
    stopped = agentcell.stop_all()
    assert run_of(second) in stopped
    await asyncio.gather(*stopped)
    assert second.status == "stopped" and warnings_of(second) == []  # stopped, not replaced
    assert third.status in ("completed", "stopped")


async def test_runs_of_one_cell_execution_coexist_and_the_next_execution_replaces_them(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A marimo cell calling show() twice keeps both runs; running the cell again replaces both."""
    server.script(SLOW, SLOW, Reply(Text("Again.")))
    first_execution, second_execution = object(), object()
    monkeypatch.setattr(marimo, "marimo_execution", lambda: ("Hbol", first_execution))
    monkeypatch.setattr(marimo, "keep_transcript_in_marimo", lambda *_: None)
    a = agentcell.show("A [[answer]]", model=compat(server))
    b = agentcell.show("B [[answer]]", model=compat(server))
    await eventually(lambda: len(server.chat_requests) == 2)
    assert a.status == b.status == "running"

    monkeypatch.setattr(marimo, "marimo_execution", lambda: ("Hbol", second_execution))
    c = agentcell.show("C [[answer]]", model=compat(server))
    handles = [run_of(a), run_of(b)]
    results = await asyncio.gather(*handles)
    assert [r.status for r in results] == ["stopped", "stopped"]
    assert warnings_of(a) == warnings_of(b) == [REPLACED]
    await eventually(lambda: all(r.disconnected_at for r in server.chat_requests[:2]))
    assert (await run_of(c)).answer == "Again."


async def test_static_transcript_of_a_finished_run_is_the_saved_html_in_every_form() -> None:
    view = agentcell.show("Say hello to Zanzibar [[answer]]", model="offline:fast")
    handle = run_of(view)
    result = await handle
    for source in (view, handle, result, journaled(result)):
        saved = static_transcript(source)
        assert isinstance(saved, StaticTranscript)
        assert "Zanzibar" in saved.html and "Zanzibar" in saved.text
        assert 'data-status="completed" data-alone' in saved.html
        bundle, _ = saved._repr_mimebundle_()
        assert bundle == {"text/html": saved.html, "text/plain": saved.text}
        assert saved._mime_() == ("text/html", saved.html)
        assert str(saved) == saved.text
    assert static_transcript(view).metadata["status"] == "completed"
    assert static_transcript(view)._repr_mimebundle_()[1]["agentcell"]["run_id"] == result.run_id


def journaled(result: agentcell.RunResult) -> object:
    """The journal's transcript of a run (what `static_transcript(RunResult)` reads)."""
    from agentcell.journal import load

    return load(result.run_id).transcript()


async def test_static_transcript_while_running_is_marked_unfinished(server: FakeOpenAI) -> None:
    server.script(SLOW)
    view = agentcell.show("Long [[answer]]", model=compat(server))
    await eventually(lambda: "word" in static_transcript(view).text)
    assert "still running when this output was saved" in static_transcript(view).text
    agentcell.stop_all()
    await run_of(view)


def test_static_transcript_says_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"takes show\(\)'s widget, a RunHandle, a RunResult or a Transcript, not int"):
        static_transcript(3)
    missing = agentcell.RunResult(run_id="nowhere", status="completed")
    with pytest.raises(agentcell.AgentcellError, match=r"no journal for run 'nowhere'.*show the run's widget"):
        static_transcript(missing)


@pytest.mark.slow  # a python subprocess
def test_show_in_a_script_says_in_one_line_what_to_do(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text("import agentcell\nagentcell.show('Hi [[answer]]')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "agentcell.errors.NoEventLoop: show() needs a running event loop (a Jupyter or marimo notebook, or async "
        "code); in a script use `result = agentcell.complete(...)`")
    assert "asyncio" not in done.stderr and "no running event loop" not in done.stderr
    assert "During handling" not in done.stderr


def test_no_event_loop_is_an_agentcell_error() -> None:
    assert issubclass(agentcell.NoEventLoop, agentcell.AgentcellError)
    assert issubclass(agentcell.NoEventLoop, RuntimeError)  # `except RuntimeError` code keeps working
