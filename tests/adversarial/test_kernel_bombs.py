"""A `--types` alias bomb and an include bomb in a real kernel: one error, the kernel's memory bounded.

Before: the issue's 0.6 KB type file (nine levels of six-way mapping aliases) grew the kernel's RSS by
~150 MB/s to past a gigabyte before any error, and three 2.4 KB templates that include each other
100 times each to 3.4 GB in 45 s; only a restart ended either. After: both cells end at once in one
`UsageError` that names the cause (the include's also shows its source line and caret, as every
template error does), the kernel's peak RSS (`VmHWM`, read by the kernel itself from
`/proc/self/status`) grows by less than `RSS_BOUND_MB`, and the next cell runs.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.adversarial.bombs import alias_bomb, include_bomb
from tests.kernel.conftest import kernel
from tests.kernelclient import KernelSession

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel reads its RSS from /proc"),
]
__all__ = ["kernel"]  # the module-scoped real-kernel fixture, one per installed ipykernel

REPLY_GUARD_S = 120
"""A hang guard for the cell's reply (the old code never answered within it), not a time limit under test."""
RSS_BOUND_MB = 100
"""Growth of the kernel's peak RSS a refused bomb may cause (the bombs reached 1–3 GB before)."""
PEAK_RSS = "print(next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:')))"
"""The kernel's peak resident set size so far, in kB (the peak: a spike freed again still shows)."""


def peak_mb(kernel: KernelSession) -> float:
    return int(kernel.run(PEAK_RSS).strip()) / 1024


def refused(kernel: KernelSession, cell: str) -> str:
    """Run `cell`; it must end in an error reply whose only output is a `UsageError` (no traceback)."""
    msg_id = kernel.execute(cell)
    kernel.wait_until(lambda: msg_id in kernel.replies and msg_id in kernel.idle, timeout=REPLY_GUARD_S, what="the reply")
    assert kernel.replies[msg_id][1]["content"]["status"] == "error"
    outputs = kernel.outputs.get(msg_id, [])
    text = "".join(o["content"].get("text", "") for o in outputs if o["msg_type"] == "stream")
    assert [o["msg_type"] for o in outputs] == ["stream"] and "Traceback" not in text, outputs
    assert text.startswith("UsageError: ")
    return text.removeprefix("UsageError: ").rstrip("\n")


def test_a_types_alias_bomb_is_one_line_and_the_kernel_stays_small(kernel: KernelSession, tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(9))
    assert path.stat().st_size < 700
    before = peak_mb(kernel)
    message = refused(kernel, f"%%agent --types {path} -o bombed\n[[Bomb:b]]")
    assert peak_mb(kernel) - before < RSS_BOUND_MB
    assert "\n" not in message
    assert message.startswith(f"{path}, line ") and "aliases repeat more than 10,000 values" in message
    assert kernel.run("print('bombed' in globals(), 1 + 1)").strip() == "False 2"


def test_an_include_bomb_is_one_error_naming_the_chain_and_the_kernel_stays_small(
    kernel: KernelSession, tmp_path: Path
) -> None:
    include_bomb(tmp_path, 100)  # the issue's: three 2.4 KB files, each including the next 100 times
    before = peak_mb(kernel)
    message = refused(kernel, f'%%agent --include-path {tmp_path} -o bombed\n<include src="a.sd"/>\n[[answer]]')
    assert peak_mb(kernel) - before < RSS_BOUND_MB
    first, *shown = message.split("\n")
    assert re.fullmatch(
        rf"{re.escape(str(tmp_path / 'c.sd'))}, line 1, column \d+: included text passes "
        r"1,000,000 bytes in all \(at a\.sd → b\.sd → c\.sd → d\.sd\); include fewer or smaller files",
        first,
    )
    assert len(shown) == 2 and shown[1].strip() == "^"  # the include's line, cut around it, and the caret
    assert len(shown[0]) < 200
    assert kernel.run("print('bombed' in globals(), 1 + 1)").strip() == "False 2"
