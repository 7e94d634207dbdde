"""A tool that calls `sys.exit(2)` in a real kernel: the run ends `failed`, the kernel keeps answering.

Before: the `SystemExit` left the run's task and ended the kernel's event loop: no reply to the next
cell, Interrupt ignored, a restart the only way out. After: the call shows failed, the run ends
`failed`, the next cell runs in the same process.
"""

from __future__ import annotations

import pytest

from tests.kernel.conftest import kernel, start_cell
from tests.kernelclient import KernelSession

pytestmark = pytest.mark.kernel
__all__ = ["kernel"]  # the module-scoped real-kernel fixture, one per installed ipykernel

ENDINGS = ("completed", "failed", "stopped", "halted", "budget_exhausted")
TOOL = '''
import sys

def parse_flags(flags: str) -> str:
    """Parse command-line flags (exits on a bad one, as argparse does)."""
    sys.exit(2)
'''


def test_tool_sys_exit_ends_the_cell_failed_and_the_kernel_answers(kernel: KernelSession) -> None:
    pid = kernel.run("import os; print(os.getpid())").strip()
    kernel.run(TOOL)
    _, comm = start_cell(kernel, "%%agent -t parse_flags -o exited\nParse the flags \"--bad\".\n[[answer|use_tools]]")
    kernel.wait_until(lambda: comm.state.get("status") in ENDINGS, timeout=30, what="the end of the run")
    assert comm.state["status"] == "failed"
    assert kernel.run("print(exited.status); print(exited.result().error)").strip().split("\n") == [
        "failed",
        "the tool 'parse_flags' raised SystemExit: 2; the run was ended (the kernel keeps running)",
    ]
    assert kernel.run("print(1 + 1)").strip() == "2"
    assert kernel.run("import os; print(os.getpid())").strip() == pid
