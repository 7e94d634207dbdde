"""The README's "Coming from struckdown" example runs, against the fixture server standing in for its proxy."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from tests.openai_server import Call, FakeOpenAI, Reply, Text

from .conftest import KEY, journal_text
from .test_incremental import lookup_module
from .test_seed_examples import TEMPLATE

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def example() -> str:
    section = README[README.index("## Coming from struckdown") :]
    return re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(require_key=KEY) as server:
        for _ in range(2):  # the example runs the template twice: complete_async, then the event loop
            server.script(Reply(Call("lookup_module", {"module_code": "PSYC605"})), Reply(Text("Dr Ada Byron.")))
        source = example().replace("http://localhost:4000/v1", server.base_url)  # the proxy is the fixture server
        ns: dict[str, Any] = {"key": KEY, "prompt": TEMPLATE, "lookup_module": lookup_module,
                              "ctx": {"question": "Who leads PSYC605?"}, "TOOLS": [lookup_module]}
        code = compile(source, "<README>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        await eval(code, ns)
    assert ns["result"]["answer"] == "Dr Ada Byron."
    printed = capsys.readouterr().out
    assert printed == (
        "calling lookup_module({'module_code': 'PSYC605'})\n  -> Cognition and Emotion, led by Dr Ada Byron\n"
        "Dr Ada Byron."
    )
    assert {r.body["model"] for r in server.chat_requests} == {"gpt-4o-mini"}
    assert KEY not in printed + journal_text()
