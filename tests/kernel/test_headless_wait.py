"""A plain `%%agent` cell waits for its run when no live front end shows it, and only then.

Headless runners (nbclient, papermill, `nbconvert --execute`) send execute requests without a cell id
and render no widget; JupyterLab, Notebook 7 and VS Code send a cell id, and any front end that renders
a view talks back on its comm. The test client plays each: `headless=True` sends requests as nbclient
does, and a `snapshot_request` on a widget's comm is what a view sends when it opens.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kernel.conftest import KERNELS, STOP_GUARD_S, define_endless, kernel_available, open_session
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel

MARKDOWN = """
import asyncio as _asyncio
from pydantic_ai.models.function import FunctionModel as _FunctionModel

async def _markdown_stream(messages, info):
    for piece in ["**Photosynthesis** ", "turns light ", "into sugar.", "\\n\\n", "- light\\n", "- water\\n"] * 4:
        yield piece
        await _asyncio.sleep(0.02)

markdown = _FunctionModel(stream_function=_markdown_stream, model_name="markdown")
"""
"""A model whose answer takes a while (24 pauses) and is Markdown, so a saved answer shows it rendered."""

WAITED = "so this cell waits for its run to finish"


@pytest.fixture(scope="module", params=KERNELS)
def fresh(request: pytest.FixtureRequest) -> Iterator[KernelSession]:
    """A kernel of its own: whether a view ever talked is remembered for the kernel's life."""
    if not kernel_available(request.param):
        pytest.skip(f"kernel {request.param!r} is not installed here (scripts/setup creates it)")
    session = open_session(request.param)
    try:
        session.run(MARKDOWN)
        define_endless(session)
        yield session
    finally:
        session.close()


def _new_widget(kernel: KernelSession, before: set[str]) -> dict[str, object]:
    comm = next(c for c in kernel.agent_widgets() if c.comm_id not in before)
    return comm.state


def test_a_headless_plain_cell_waits_for_its_run_and_says_so(fresh: KernelSession) -> None:
    assert fresh.run("import agentcell; print(agentcell.headless())", headless=True).strip() == "True"
    before = {c.comm_id for c in fresh.agent_widgets()}
    out = fresh.run("%%agent -o waited -m markdown\nExplain photosynthesis.\n[[answer]]", headless=True)
    # The cell's reply came after the run's end: its widget's last state went out before the reply.
    assert _new_widget(fresh, before)["status"] == "completed"
    assert WAITED in out
    assert out.count("\n") == 1  # one line, and no RunResult as the cell's value: a plain cell has none
    assert fresh.run("print(waited.status, waited.answer.startswith('**Photosynthesis**'))",
                     headless=True).strip() == "completed True"


def test_switched_off_a_headless_cell_returns_at_once(fresh: KernelSession) -> None:
    fresh.run("%config AgentMagics.wait_when_headless = False", headless=True)
    try:
        out = fresh.run("%%agent -o bg -m endless\nExplain.\n[[answer]]", headless=True)
        assert WAITED not in out
        assert fresh.run("print(bg.status)", headless=True).strip() == "running"
        fresh.run("bg.cancel()", headless=True)
        fresh.wait_until(lambda: fresh.run("print(bg.status)").strip() == "stopped", timeout=STOP_GUARD_S)
    finally:
        fresh.run("%config AgentMagics.wait_when_headless = True", headless=True)


def test_a_cell_from_jupyterlab_returns_at_once(fresh: KernelSession) -> None:
    """JupyterLab, Notebook 7 and VS Code send the cell's id: the run goes on in the background."""
    assert fresh.run("import agentcell; print(agentcell.headless())").strip() == "False"
    out = fresh.run("%%agent -o lab -m endless\nExplain.\n[[answer]]")
    assert WAITED not in out
    assert fresh.run("print(lab.status)").strip() == "running"
    fresh.run("lab.cancel()")
    fresh.wait_until(lambda: fresh.run("print(lab.status)").strip() == "stopped", timeout=STOP_GUARD_S)


def test_vscode_is_live_without_a_cell_id(fresh: KernelSession) -> None:
    fresh.run("__vsc_ipynb_file__ = '/tmp/x.ipynb'", headless=True)
    try:
        assert fresh.run("print(agentcell.headless())", headless=True).strip() == "False"
        out = fresh.run("%%agent -o code -m endless\nExplain.\n[[answer]]", headless=True)
        assert WAITED not in out
        fresh.run("code.cancel()", headless=True)
    finally:
        fresh.run("del __vsc_ipynb_file__", headless=True)
    assert fresh.run("print(agentcell.headless())", headless=True).strip() == "True"


def test_a_headless_run_asking_for_an_approval_does_not_hang_the_cell(fresh: KernelSession) -> None:
    """Nobody can click headless: the cell stops waiting when the run asks, and the run waits on."""
    fresh.run("from agentcell import tool\n@tool\ndef enrol(code: str) -> str:\n    '''Enrol on a module.'''\n"
              "    return 'enrolled'", headless=True)
    out = fresh.run("%%agent -o asking -t enrol --approve writes -m offline:fast\nEnrol me on PSYC605.\n"
                    "[[answer|use_tools=true]]", headless=True, timeout=STOP_GUARD_S)
    assert "waiting for an approval that nobody here can give" in out
    assert fresh.run("print(asking.status)", headless=True).strip() == "running"
    fresh.run("asking.cancel()", headless=True)
    fresh.wait_until(lambda: fresh.run("print(asking.status)", headless=True).strip() == "stopped",
                     timeout=STOP_GUARD_S)


def test_no_wait_returns_at_once_headless(fresh: KernelSession) -> None:
    out = fresh.run("%%agent -o nowait -m endless --no-wait\nExplain.\n[[answer]]", headless=True)
    assert WAITED not in out
    assert fresh.run("print(nowait.status)", headless=True).strip() == "running"
    fresh.run("nowait.cancel()", headless=True)


def test_once_a_view_has_talked_no_cell_waits(fresh: KernelSession) -> None:
    """A front end without cell ids that renders our views (it has opened one: the view asked for a
    snapshot) is live: the kernel never blocks a cell there. Last in the module: this is remembered."""
    before = {c.comm_id for c in fresh.agent_widgets()}
    fresh.run("%%agent -m offline:fast\nSay hello.\n[[answer]]", headless=True)  # still headless: it waits
    comm = next(c for c in fresh.agent_widgets() if c.comm_id not in before)
    fresh.send_custom(comm.comm_id, {"kind": "snapshot_request"})
    fresh.wait_until(lambda: any(c.get("kind") == "snapshot" for _, c in comm.custom), what="snapshot")
    assert fresh.run("print(agentcell.headless())", headless=True).strip() == "False"
    out = fresh.run("%%agent -o viewed -m endless\nExplain.\n[[answer]]", headless=True)
    assert WAITED not in out
    assert fresh.run("print(viewed.status)", headless=True).strip() == "running"
    fresh.run("viewed.cancel()", headless=True)
