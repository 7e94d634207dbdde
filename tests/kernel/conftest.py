"""Real kernels for the magic tests: the dev venv's ipykernel (7.x) and, where set up, ipykernel 6.29.

`scripts/setup` creates `.venv-k6` with ipykernel 6.29.x and agentcell, and registers it as the
kernelspec `agentcell-k6` under `.jupyter-k6/`. Tests run once per available kernel; CI always
has both. A missing 6.29 kernel is reported as a skip, never silently dropped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kernelclient import KernelSession, WidgetComm, find_k6_kernel, kernel_available

ROOT = Path(__file__).resolve().parents[2]
find_k6_kernel(ROOT)

KERNELS = ["python3", "agentcell-k6"]


def kernel_env() -> dict[str, str]:
    """The kernel's environment additions: the offline model, and this checkout's `src` first on the path
    (the venvs install agentcell editable from one checkout; a worktree's tests must run its own code)."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    return {"AGENTCELL_MODEL": "offline", "PYTHONPATH": path}


@pytest.fixture(scope="module", params=KERNELS)
def kernel(request: pytest.FixtureRequest) -> Iterator[KernelSession]:
    name = request.param
    if not kernel_available(name):
        pytest.skip(f"kernel {name!r} is not installed here (scripts/setup creates it)")
    session = open_session(name)
    try:
        yield session
    finally:
        session.close()


def open_session(name: str, *, session_type: type[KernelSession] = KernelSession) -> KernelSession:
    """A started kernel with agentcell loaded and its ipykernel version read; closed again if that fails.

    (A session left to the garbage collector warns about its unclosed zmq sockets in a later test,
    which `filterwarnings = error` turns into that test's failure.)
    """
    session = session_type(kernel_name=name, extra_env=kernel_env())
    try:
        session.run("%load_ext agentcell", timeout=180)  # a cold machine compiles every .pyc first
        version = session.run("import ipykernel; print(ipykernel.__version__)").strip()
        session.version = tuple(int(p) for p in version.split(".")[:2])
    except BaseException:
        session.close()
        raise
    return session


STOP_GUARD_S = 60
"""A hang guard for waits on a stop, not a time limit under test (latency lives in bench/stop_latency.py)."""

ENDLESS = """
import asyncio as _asyncio, itertools as _itertools
from pydantic_ai.models.function import FunctionModel as _FunctionModel

async def _endless_stream(messages, info):
    for i in _itertools.count():
        yield f"w{i} "
        await _asyncio.sleep(0.02)

endless = _FunctionModel(stream_function=_endless_stream, model_name="endless")
"""
"""Defines `endless` in the kernel: a model that streams until stopped, so a run that ends `stopped`
was ended by the stop (not by finishing first), and a stop that never lands hangs the wait instead."""


def define_endless(kernel: KernelSession) -> None:
    kernel.run(ENDLESS)


def start_cell(kernel: KernelSession, code: str, *, cell_id: str | None = None) -> tuple[str, WidgetComm]:
    """Execute an %%agent cell and return its msg_id and the new widget's comm."""
    before = {c.comm_id for c in kernel.agent_widgets()}
    msg_id = kernel.execute(code, cell_id=cell_id)
    kernel.wait_until(lambda: any(c.comm_id not in before for c in kernel.agent_widgets()), what="widget comm")
    comm = next(c for c in kernel.agent_widgets() if c.comm_id not in before)
    return msg_id, comm
