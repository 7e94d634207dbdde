"""The magic's kernel behaviours (docs/kernel-and-loop.md) in real kernels, on ipykernel 7.x and 6.29.

Each test plays JupyterLab with jupyter_client: it sends cells with cell ids, comm messages (the
Stop button), subshell requests, and SIGINT through the kernel manager (Kernel → Interrupt).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.kernel.conftest import STOP_GUARD_S, define_endless, start_cell
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel
LONG = "%%agent -o {name} -m endless\nExplain photosynthesis in detail.\n[[answer]]"
"""A run that streams until stopped: `stopped` can only come from the stop under test."""


@pytest.fixture(autouse=True)
def _endless(kernel: KernelSession) -> Iterator[None]:
    define_endless(kernel)
    yield


def status(comm_state: dict[str, object]) -> object:
    return comm_state.get("status")


def test_stop_by_comm_message_stops_the_run(kernel: KernelSession) -> None:
    _, comm = start_cell(kernel, LONG.format(name="fast"))
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    # The stream never ends by itself, so `stopped` is the stop's doing. Latency (2-5 ms on an idle
    # kernel in the notes) is measured in bench/stop_latency.py, not asserted here.
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
    assert kernel.run("print(fast.status, fast.answer.startswith('w0'))").strip() == "stopped True"


def test_stop_from_another_thread_wakes_the_loop(kernel: KernelSession) -> None:
    """With comms over subshells the Stop handler runs on a subshell thread (ipykernel 7.0-7.3).

    Calling the widget's handler from a plain thread reproduces that on every version: a bare
    `task.cancel()` from a thread would sit until the loop's next timer (seconds, ipykernel#1510).
    """
    _, comm = start_cell(kernel, LONG.format(name="threaded"))
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.run("import threading, time\n"
               "_w = threaded.widget\n"
               "_t = threading.Thread(target=lambda: (time.sleep(0.3), _w._on_frontend_msg(_w, {'kind': 'stop'}, [])))\n"
               "_t.start()")
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
    assert kernel.run("_t.join(); print(threaded.status)").strip() == "stopped"


def open_subshell(kernel: KernelSession) -> str:
    if kernel.version < (7, 0):
        pytest.skip("kernel subshells exist from ipykernel 7.0")
    return kernel.create_subshell()


def test_stop_sent_on_a_kernel_subshell(kernel: KernelSession) -> None:
    subshell_id = open_subshell(kernel)
    _, comm = start_cell(kernel, LONG.format(name="sub"))
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    stop = kernel.kc.session.msg("comm_msg", {"comm_id": comm.comm_id,
                                              "data": {"method": "custom", "content": {"kind": "stop"}}})
    stop["header"]["subshell_id"] = subshell_id
    kernel.kc.shell_channel.send(stop)
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")


def test_a_run_shown_in_a_subshell_is_saved_by_that_subshells_next_cell(kernel: KernelSession) -> None:
    """A cell run on a subshell (its own thread and loop) shows a run there; the run ends after the cell.
    The subshell's next cell publishes the final transcript again under itself (what headless runners
    keep, `saved_outputs.py`); a main-shell cell in between leaves it alone (the view is not its thread's)."""
    subshell = open_subshell(kernel)
    kernel.run("from pydantic_ai.models.function import FunctionModel as _FM\n"
               "async def _hello(messages, info):\n    yield 'HELLO'\n"
               "quick = _FM(stream_function=_hello, model_name='quick')")
    first = kernel.execute("%%agent -m quick -o sub_run\nSay hello. [[answer]]", subshell_id=subshell)
    kernel.wait_until(lambda: first in kernel.idle, what="the subshell cell")
    (twin,) = [m["content"]["transient"]["display_id"] for m in kernel.outputs[first]
               if "agentcell-static" in m["content"]["data"].get("text/html", "")]

    def twin_parents() -> list[str]:
        return [m["parent_header"]["msg_id"] for m in kernel.display_updates
                if m["content"].get("transient", {}).get("display_id") == twin]

    assert kernel.run("await sub_run\nprint(sub_run.status, sub_run.answer)").strip() == "completed HELLO"
    assert set(twin_parents()) == {first}  # its cell's end and the run's end; the main shell's cell: nothing
    second = kernel.execute("print('next')", subshell_id=subshell)
    kernel.wait_until(lambda: second in kernel.idle, what="the subshell's next cell")
    assert set(twin_parents()) == {first, second}
    (again,) = [m for m in kernel.display_updates if m["parent_header"]["msg_id"] == second
                and m["content"].get("transient", {}).get("display_id") == twin]
    assert 'data-status="completed"' in again["content"]["data"]["text/html"]


def test_rerunning_a_cell_replaces_its_run(kernel: KernelSession) -> None:
    cell_id = str(uuid.uuid4())
    _, first = start_cell(kernel, LONG.format(name="again"), cell_id=cell_id)
    kernel.wait_until(lambda: kernel.streamed_text(first) != "", what="first run streams")
    _, second = start_cell(kernel, LONG.format(name="again"), cell_id=cell_id)
    kernel.wait_until(lambda: status(first.state) == "stopped", timeout=STOP_GUARD_S, what="first run stopped")
    kernel.wait_until(lambda: kernel.streamed_text(second) != "", what="second run streams")
    assert status(second.state) == "running"
    kernel.send_custom(second.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: status(second.state) == "stopped", timeout=STOP_GUARD_S, what="second stopped")


def test_agent_stop_stops_every_background_run(kernel: KernelSession) -> None:
    _, a = start_cell(kernel, LONG.format(name="a"))
    _, b = start_cell(kernel, LONG.format(name="b"))
    kernel.wait_until(lambda: kernel.streamed_text(a) != "" and kernel.streamed_text(b) != "", what="both stream")
    assert kernel.run("n = %agent stop\nprint(n)").strip() == "2"
    kernel.wait_until(lambda: status(a.state) == status(b.state) == "stopped", timeout=STOP_GUARD_S, what="both stopped")


def test_interrupt_hook_stops_background_runs_while_idle(kernel: KernelSession) -> None:
    kernel.run("%agent config interrupt_stops_runs=true")
    try:
        _, comm = start_cell(kernel, LONG.format(name="intr"))
        kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
        kernel.pump(0.2)  # let the execute_reply arrive: the kernel is idle again
        kernel.km.interrupt_kernel()
        kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
    finally:
        kernel.run("%agent config interrupt_stops_runs=false")
    # Without the hook, Interrupt leaves a background run alone (the hook is opt-in).
    _, comm = start_cell(kernel, LONG.format(name="intr2"))
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.pump(0.2)
    kernel.km.interrupt_kernel()
    kernel.pump(0.5)
    assert status(comm.state) == "running"
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")


def test_wait_blocks_until_the_run_ends_and_returns_its_result(kernel: KernelSession) -> None:
    msg_id, comm = start_cell(kernel, "%%agent --wait -o w\nSay something short.\n[[answer]]")
    kernel.wait_until(lambda: msg_id in kernel.replies and msg_id in kernel.idle, timeout=60, what="reply")
    # The cell's own result is the finished run: it could only be made once the run had ended.
    results = [o for o in kernel.outputs[msg_id] if o["msg_type"] == "execute_result"]
    assert results and "completed" in results[0]["content"]["data"]["text/plain"]
    kernel.wait_until(lambda: status(comm.state) == "completed", timeout=STOP_GUARD_S, what="completed")
    assert kernel.run("print(w.status)").strip() == "completed"


def test_wait_stop_button(kernel: KernelSession) -> None:
    dispatches_while_awaiting = kernel.version >= (7, 4)  # ipykernel PR #1565
    model = "endless" if dispatches_while_awaiting else "offline"  # older kernels: the run must end by itself
    msg_id, comm = start_cell(kernel, f"%%agent --wait -o ws -m {model}\nExplain photosynthesis in detail.\n[[answer]]")
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    if dispatches_while_awaiting:
        # The click reached the run while the cell awaited it: the endless run ended `stopped`.
        kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
        assert comm.state.get("hint") == ""
    else:
        # Older kernels queue the click until the cell ends; the widget says to use Interrupt.
        kernel.wait_until(lambda: msg_id in kernel.replies, timeout=60, what="reply")
        assert status(comm.state) == "completed"
        assert "Interrupt" in str(comm.state.get("hint"))
    kernel.wait_until(lambda: msg_id in kernel.replies, timeout=60, what="reply")


def test_wait_interrupt_stops_the_run(kernel: KernelSession) -> None:
    msg_id, comm = start_cell(kernel, "%%agent --wait -o wi -m endless\nExplain photosynthesis in detail.\n[[answer]]")
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.km.interrupt_kernel()
    kernel.wait_until(lambda: msg_id in kernel.replies, timeout=STOP_GUARD_S, what="reply")
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
    assert kernel.replies[msg_id][1]["content"]["status"] == "error"
    assert kernel.run("print(wi.status, bool(wi.answer))").strip() == "stopped True"


def test_a_kernel_with_nest_asyncio_applied_still_runs_and_stops(kernel: KernelSession) -> None:
    kernel.run("import nest_asyncio; nest_asyncio.apply()")
    _, comm = start_cell(kernel, LONG.format(name="nested"))
    kernel.wait_until(lambda: kernel.streamed_text(comm) != "", what="first token")
    kernel.send_custom(comm.comm_id, {"kind": "stop"})
    kernel.wait_until(lambda: status(comm.state) == "stopped", timeout=STOP_GUARD_S, what="stopped")
    msg_id, done = start_cell(kernel, "%%agent --wait -o nested2 -m offline:fast\nHi.\n[[answer]]")
    kernel.wait_until(lambda: msg_id in kernel.replies, timeout=30, what="reply")
    assert status(done.state) == "completed"
