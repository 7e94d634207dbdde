"""The journal: every event as it happens, per-request rows, totals, and a restore after a crash."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agentcell import journal
from agentcell.engine import complete_async, start_run
from agentcell.events import ProcessingComplete, RequestCompleted, ThinkingDelta, TokenDelta, ToolStarted, Usage
from agentcell.events.json import to_wire
from tests.engine.conftest import Call, Script, conversation, slot, template

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def lookup(q: str) -> str:
    """Look q up."""
    return f"found {q}"


async def test_every_event_is_journaled_and_totals_come_from_it(tmp_path: Path) -> None:
    script = Script(["A", "1"], [Call("lookup", {"q": "x"})], ["B1"])
    tpl = template(slot("a"), slot("b", use_tools=True))
    run = start_run(tpl, model=script.model, tools=[lookup], journal=tmp_path)
    result = await run
    path = tmp_path / f"{run.run_id}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["event"]["kind"] for r in rows if "event" in r] == [e.kind for e in run.events_so_far]
    requests = [r["event"] for r in rows if r.get("event", {}).get("kind") == "request_completed"]
    assert [(r["run_id"], r["slot"], r["request"], r["usage"]["requests"]) for r in requests] == [
        (run.run_id, "a", 1, 1),
        (run.run_id, "b", 1, 1),
        (run.run_id, "b", 2, 1),
    ]
    assert all(r["latency_ms"] >= 0 for r in requests)
    record = journal.load(run.run_id, path=tmp_path)
    assert record.events == run.events_so_far
    assert record.finished and record.status == "completed"
    assert journal.usage_totals(run.run_id, path=tmp_path) == result.usage
    assert record.to_result() == result


async def test_journal_off_and_default_folder(journal_dir: Path) -> None:
    off = await complete_async(template(slot("a")), model=Script(["x"]).model, journal=False)
    on = await complete_async(template(slot("a")), model=Script(["x"]).model)
    assert not (journal_dir / f"{off.run_id}.jsonl").exists()
    assert (journal_dir / f"{on.run_id}.jsonl").exists()
    assert journal.load(on.run_id).status == "completed"


CRASHING = textwrap.dedent(
    """
    import os, sys
    from agentcell.engine import complete
    from tests.engine.conftest import Call, Script, slot, template

    def crash(what: str) -> str:
        '''Crash the process, like a kernel that dies.'''
        os._exit(7)

    script = Script(["The answer ", "is 1."], [Call("crash", {"what": "now"}, id="k1")])
    complete(template(slot("a", prompt="First?"), slot("b", prompt="Second?", use_tools=True)),
             model=script.model, tools=[crash], run_id="crashed1", journal=sys.argv[1])
    """
)


async def test_a_run_killed_with_its_process_is_restored_from_the_journal(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CRASHING, str(tmp_path)], cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 7
    record = journal.load("crashed1", path=tmp_path)
    assert not record.finished and record.status is None
    last = record.events[-1]
    assert isinstance(last, ToolStarted) and last.tool_name == "crash"
    assert "".join(e.text for e in record.events if isinstance(e, TokenDelta)) == "The answer is 1."
    # The transcript up to the last event: slot a whole, slot b's prompt and its tool call.
    assert conversation(record.messages) == [
        [("user", "First?")],
        [("assistant", "The answer is 1.")],
        [("user", "Second?")],
        [("call", "crash", {"what": "now"})],
    ]
    assert record.usage.requests == 2
    restored = record.to_result()
    assert (restored.status, restored.results, restored.usage) == ("failed", {"a": "The answer is 1."}, record.usage)
    # …and the restored run can be resumed: slot a is kept, slot b asks its question again.
    script = Script(["B done"])
    resumed = await start_run(
        template(slot("a", prompt="First?"), slot("b", prompt="Second?", use_tools=True)),
        model=script.model,
        tools=[lookup],
        resume_from=restored,
        journal=tmp_path,
    )
    assert (resumed.status, resumed.results, resumed.segment) == (
        "completed",
        {"a": "The answer is 1.", "b": "B done"},
        2,
    )
    assert conversation(script.requests[0].messages)[-1] == [("user", "Second?")]
    assert resumed.usage.requests == 3
    assert journal.usage_totals("crashed1", path=tmp_path) == resumed.usage


async def test_rows_are_written_in_batches_not_one_write_per_row(tmp_path: Path) -> None:
    """10,000 token rows cost a handful of writes (a timer batch), not 10,000 (issue 18); a boundary row
    (here `tool_started`) writes everything before it at once, so a tool that kills the process loses nothing."""
    sink = journal.Journal(tmp_path / "batched.jsonl")
    for i in range(10_000):
        sink.event(TokenDelta(run_id="r", slot="a", text=f"w{i} "))
    assert sink.writes == 0 and (tmp_path / "batched.jsonl").read_bytes() == b""  # still in memory
    sink.event(ToolStarted(run_id="r", slot="a", call_id="c1", tool_name="crash", args={}))
    assert sink.writes == 1
    assert len((tmp_path / "batched.jsonl").read_bytes().splitlines()) == 10_001
    sink.event(TokenDelta(run_id="r", slot="a", text="later"))
    deadline = time.monotonic() + 10
    while sink.writes < 2 and time.monotonic() < deadline:  # the timer writes it, with no further row
        await asyncio.sleep(0.05)
    assert sink.writes == 2
    sink.close()
    assert len((tmp_path / "batched.jsonl").read_bytes().splitlines()) == 10_002


def test_a_delta_row_is_what_the_generic_serializer_writes(tmp_path: Path) -> None:
    """Text deltas take a hand-written fast path; it must write exactly the event the adapter would."""
    events = [TokenDelta(run_id="r\"1", slot="a b", text="caf\u00e9 \"q\"\n\ud83d", round=3),
              ThinkingDelta(run_id="r", slot="s", text="hm\u2028"),
              TokenDelta(run_id="r", slot="a b", text='ascii "q" \\ \n\t\x01 </script>', round=3)]
    sink = journal.Journal(tmp_path / "d.jsonl")
    for event in events:
        sink.event(event)
    sink.close()
    rows = [json.loads(line)["event"] for line in (tmp_path / "d.jsonl").read_bytes().split(b"\n") if line]
    expected = [json.loads(journal.event_adapter().dump_json(e, fallback=repr)) for e in
                (TokenDelta(run_id="r\"1", slot="a b", text="caf\u00e9 \"q\"\n\ufffd", round=3), *events[1:])]
    assert rows == expected
    assert [journal.event_adapter().validate_python(r) for r in rows][1] == events[1]


def test_new_events_serialize_for_the_widget() -> None:
    event = RequestCompleted(run_id="r", slot="a", request=1, usage=Usage(requests=1, input_tokens=5))
    assert to_wire(event, t=0.5) == {
        "run_id": "r",
        "slot": "a",
        "request": 1,
        "usage": {"requests": 1, "tool_calls": 0, "input_tokens": 5, "output_tokens": 0, "cost": None,
                  "estimated": False},
        "latency_ms": 0.0,
        "model": "",
        "purpose": "answer",
        "ended": "completed",
        "kind": "request_completed",
        "t": 0.5,
    }
    assert isinstance(ProcessingComplete, type)
