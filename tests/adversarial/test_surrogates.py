"""A lone surrogate (`"\\ud83d"`, text that is not valid UTF-8) anywhere in a run.

Before: in a tool result it reached the widget's comm message, whose UTF-8 encoding failed: the live
view ended `failed` with the streamed answer lost, and the saved notebook got no transcript; the
journal stopped ("journaling stopped: … surrogates not allowed"); in a prompt, the journal's message
row raised inside the request hook and failed the run. After: every event is scrubbed where the
engine emits it (U+FFFD, counted in a warning), and the wire, the exported transcript and the
journal rows scrub whatever else reaches them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentcell import journal
from agentcell.engine import start_run
from agentcell.events import ProcessingComplete, TokenDelta, ToolCompleted
from agentcell.events.json import to_wire
from agentcell.formats.jsonsafe import scrub_text
from agentcell.frontends.widget.protocol import transcript_json
from agentcell.frontends.widget.widget import AgentWidget
from agentcell.result import RunResult
from tests.engine.conftest import Call, Script, slot, template

pytestmark = pytest.mark.anyio
LONE = "a\ud83db"


class Captured(AgentWidget):
    """An AgentWidget whose custom messages are recorded instead of sent to a front end."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent: list[dict[str, Any]] = []

    def send(self, content: Any, buffers: Any = None) -> None:
        self.sent.append(content)


def utf8(value: Any) -> bytes:
    """What the kernel's session does to every message: JSON, then UTF-8 (raises on a lone surrogate)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def test_scrub_text_replaces_lone_surrogates_and_joins_pairs() -> None:
    assert scrub_text(LONE) == ("a\ufffdb", 1)
    assert scrub_text("\ud83d\ude00 ok \udc80") == ("\U0001f600 ok \ufffd", 1)
    assert scrub_text("plain é") == ("plain é", 0)


async def test_tool_result_with_a_lone_surrogate_reaches_every_surface_as_valid_utf8(tmp_path: Path) -> None:
    async def odd() -> str:
        """Return broken text."""
        return LONE

    script = Script([Call("odd")], ["Here: ", LONE])
    run = start_run(template(slot("a", use_tools=True)), model=script.model, tools=[odd], journal=tmp_path)
    result = await run.wait()
    assert result.status == "completed" and result.answer == "Here: a\ufffdb"
    done = next(e for e in run.events_so_far if isinstance(e, ToolCompleted))
    assert done.result == "a\ufffdb"
    assert result.warnings == (
        "the tool 'odd' returned 1 lone surrogate(s) (text that is not valid UTF-8); they were replaced with U+FFFD",
        "1 lone surrogate(s) (text that is not valid UTF-8) in a token_delta event were replaced with U+FFFD",
        "1 lone surrogate(s) (text that is not valid UTF-8) in a model_response event were replaced with U+FFFD",
    )
    widget = Captured()
    for event in run.events_so_far:
        widget.apply(event)
    assert widget.status == "completed"
    utf8(widget.sent)
    utf8(widget.final)
    data, metadata = widget.static_bundle()
    utf8(data), utf8(metadata)
    (tmp_path / f"{run.run_id}.jsonl").read_bytes().decode("utf-8")  # strict: valid UTF-8 throughout
    assert journal.load(run.run_id, path=tmp_path).to_result().answer == "Here: a\ufffdb"


async def test_prompt_with_a_lone_surrogate_is_journaled(tmp_path: Path) -> None:
    script = Script(["fine"])
    tpl = template(slot("a", prompt=lambda ctx: f"About {ctx['topic']}"), variables=["topic"])
    run = start_run(tpl, model=script.model, context={"topic": LONE}, journal=tmp_path)
    result = await run.wait()
    assert result.status == "completed", result.error
    (tmp_path / f"{run.run_id}.jsonl").read_bytes().decode("utf-8")
    utf8(transcript_json(result))


def test_hand_made_events_reach_the_wire_as_valid_utf8() -> None:
    widget = Captured()
    widget.apply(TokenDelta(run_id="r", slot="a", text=LONE, round=1))
    widget.flush()
    assert widget.sent[-1]["events"][0]["text"] == "a\ufffdb"
    result = RunResult(run_id="r", status="completed", answer=LONE)
    assert to_wire(ProcessingComplete(run_id="r", status="completed", result=result), t=0)["answer"] == "a\ufffdb"


def test_a_long_answer_is_checked_in_place_and_still_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long strings are searched for a surrogate where they are (`long_strings.hollow`), not serialized to be
    checked (a copy of the answer per place it appears, at the run's end); one in them is still found."""
    from agentcell.formats import jsonsafe

    sizes: list[int] = []
    to_json = jsonsafe.to_json

    def measured(value: Any, *args: Any, **kwargs: Any) -> bytes:
        out = to_json(value, *args, **kwargs)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(jsonsafe, "to_json", measured)
    answer = "é" * jsonsafe.LONG
    result = RunResult(run_id="r", status="completed", answer=answer, results={"a": answer})
    assert to_wire(ProcessingComplete(run_id="r", status="completed", result=result), t=0)["answer"] is answer
    assert sizes and max(sizes) < 1000
    bad = answer + LONE
    result = RunResult(run_id="r", status="completed", answer=bad)
    out = to_wire(ProcessingComplete(run_id="r", status="completed", result=result), t=0)
    assert out["answer"] == answer + "a\ufffdb"
    utf8(out)
