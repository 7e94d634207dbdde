"""Media support costs nothing until such a value appears: pandas, Pillow and matplotlib are not imported."""

from __future__ import annotations

import subprocess
import sys


def test_a_plain_run_imports_no_pandas_pillow_or_matplotlib() -> None:
    code = (
        "import sys\n"
        "from agentcell.engine import complete\n"
        "from agentcell.template import compile_template\n"
        "r = complete(compile_template('Hi {{ name }} {{ n }} [[answer]]'), model='offline:fast', journal=False,\n"
        "             context={'name': 'Ada', 'n': [1, 2]})\n"
        "assert r.status == 'completed', r.error\n"
        "print(sorted(m for m in ('pandas', 'PIL', 'matplotlib', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
