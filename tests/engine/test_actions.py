"""Actions `[[@name:var|options]]`: built-ins, notebook functions decorated `@action`, their events,
binding, failures, Stop, and the network ones against a server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentcell import action
from agentcell.engine import complete_async, start, stream
from agentcell.errors import RunError
from agentcell.options import RunOptions

from .conftest import Script, brief, conversation

pytestmark = pytest.mark.anyio


async def test_set_binds_a_value_for_what_follows_and_shows_as_a_call_card() -> None:
    script = Script(["Cats purr."])
    events = [e async for e in stream('[[@set:topic|"cats"]]Tell me about {{ topic }}. [[fact]]', model=script.model,
                                      journal=False)]  # fmt: skip
    assert brief(events)[1:5] == [
        ("slot_started", "topic"),
        ("tool_started", "@set", {"#1": "cats"}),
        ("tool_completed", "@set", True, "cats", False),
        ("slot_completed", "topic", "cats"),
    ]
    assert events[-1].result.results == {"topic": "cats", "fact": "Cats purr."}  # type: ignore[union-attr]
    assert conversation(script.requests[0].messages) == [[("user", "Tell me about cats.")]]


async def test_a_notebook_action_binds_options_coerces_them_and_runs_in_a_thread() -> None:
    threads: list[str] = []

    @action
    def lookup(code: str, n: int = 1, context: Any = None) -> str:
        threads.append(threading.current_thread().name)
        assert context is not None and context["code"] == "PSYC605"
        return f"{code} x{n}"

    script = Script(["ok"])
    result = await complete_async(
        '[[@lookup:info|code, n="3"]] Summarise: {{ info }} [[summary]]',
        context={"code": "PSYC605", "lookup": lookup},
        model=script.model,
        journal=False,
    )
    assert result.results == {"info": "PSYC605 x3", "summary": "ok"}
    assert threads and threads[0] != threading.main_thread().name
    # The result joins the conversation as a user turn (struckdown's default role).
    assert conversation(script.requests[0].messages) == [[("user", "PSYC605 x3"), ("user", "Summarise: PSYC605 x3")]]


async def test_an_async_action_with_a_custom_name_and_role() -> None:
    @action(name="recall", role="assistant")
    async def remember(topic: str) -> str:
        await asyncio.sleep(0)
        return f"I said {topic} before."

    script = Script(["fine"])
    result = await complete_async(
        '[[@recall|"owls"]] Go on. [[more]]', context={"remember": remember}, model=script.model, journal=False
    )
    assert result.results == {"recall": "I said owls before.", "more": "fine"}
    assert conversation(script.requests[0].messages) == [[("assistant", "I said owls before.")], [("user", "Go on.")]]


async def test_an_action_that_raises_ends_the_run_naming_it_and_its_line() -> None:
    @action
    def broken() -> str:
        raise ValueError("database is down")

    script = Script()
    with pytest.raises(RunError) as caught:
        await complete_async("Intro\n[[@broken:x]] [[after]]", context={"broken": broken}, model=script.model,
                             journal=False)  # fmt: skip
    assert str(caught.value) == "[[@broken]] at line 2 raised ValueError: database is down"
    assert script.requests == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("1, 2", "[[@one]] at line 1 failed: takes 1 values without a key (a), got 2"),
        ("b=1", "[[@one]] at line 1 failed: has no parameter 'b' (it takes: a)"),
        ('a="x"', "[[@one]] at line 1 failed: option a='x' does not fit int: Input should be a valid integer, unable "
                  "to parse string as an integer"),
    ],
    ids=["too-many", "unknown-key", "bad-type"],
)
async def test_options_that_do_not_fit_the_function_are_reported(options: str, message: str) -> None:
    @action
    def one(a: int) -> int:
        return a

    with pytest.raises(RunError) as caught:
        await complete_async(f"[[@one:x|{options}]]", context={"one": one}, model=Script().model, journal=False)
    assert str(caught.value) == message


async def test_an_undecorated_function_is_not_an_action() -> None:
    def plain() -> str:
        return "x"

    with pytest.raises(RunError, match=r"plain\(\) is not an action: decorate it with @action"):
        await complete_async("[[@plain:x]]", context={"plain": plain}, model=Script().model, journal=False)


async def test_an_unknown_action_is_an_error_before_any_model_call() -> None:
    from agentcell.errors import TemplateSyntaxError

    with pytest.raises(TemplateSyntaxError, match="no action named 'serch'; did you mean 'search'"):
        await complete_async("[[@serch:x]]", model=Script().model, journal=False)


async def test_break_ends_the_run_and_says_where() -> None:
    script = Script(["first"])
    result = await complete_async(
        "A [[a]]\n{% if a == 'first' %}[[@break]]{% endif %}\nB [[b]]", model=script.model, journal=False
    )
    assert result.status == "completed"
    assert result.results == {"a": "first", "break": True}
    assert result.warnings == ("[[@break]] at line 2 ended the run; the slots after it did not run",)


async def test_stop_during_a_slow_action_cancels_it() -> None:
    cancelled = asyncio.Event()

    @action
    async def slow() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    run = start("[[@slow:x]] [[after]]", RunOptions(context={"slow": slow}, model=Script().model, journal=False))
    await asyncio.sleep(0.05)
    run.cancel()
    result = await run
    assert result.status == "stopped" and cancelled.is_set()


async def test_timestamp_history_and_evidence(tmp_path: Path) -> None:
    (tmp_path / "talk.txt").write_text("Hi\nHello, how can I help?\nMy parcel is late\n")
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    (evidence / "apples.md").write_text("Apples grow on trees.\n\nThey are often red or green.")
    (evidence / "cars.txt").write_text("Cars have four wheels.")
    script = Script(["ok"])
    source = (
        f'[[@timestamp:now]][[@history:past|"{tmp_path / "talk.txt"}", n=2]]'
        f'[[@evidence:facts|"apple trees", n=1, folder="{evidence}"]]Answer. [[a]]'
    )
    result = await complete_async(source, model=script.model, journal=False)
    assert result.results["now"][:2] == "20"
    assert result.results["past"] == [
        {"role": "assistant", "content": "Hello, how can I help?"},
        {"role": "user", "content": "My parcel is late"},
    ]
    assert result.results["facts"] == "[apples.md]\nApples grow on trees.\n\nThey are often red or green."
    assert conversation(script.requests[0].messages) == [
        [("assistant", "Hello, how can I help?")],
        [
            ("user", "My parcel is late"),
            ("user", "[apples.md]\nApples grow on trees.\n\nThey are often red or green."),
            ("user", "Answer."),
        ],
    ]


class _Site(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path.startswith("/search"):
            body = json.dumps({"results": [{"title": "Owls", "url": "http://x/owls", "content": "Owls hoot."}]})
            kind = "application/json"
        else:
            body = "<html><script>x()</script><h1>Syllabus</h1><p>Week 1: <b>owls</b>.</p></html>"
            kind = "text/html"
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_fetch_and_search_against_a_local_server(site: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCELL_SEARCH_URL", site + "/search?q={query}")
    script = Script(["ok"])
    source = '[[@fetch:page|url="{{ site }}/syllabus"]][[@search:hits|"owls", max_results=1]]Answer. [[a]]'
    result = await complete_async(source, context={"site": site}, model=script.model, journal=False)
    assert result.results["page"] == "# Syllabus\n\nWeek 1: owls."
    assert result.results["hits"] == "- [Owls](http://x/owls): Owls hoot."


async def test_search_without_a_service_says_how_to_configure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCELL_SEARCH_URL", raising=False)
    with pytest.raises(RunError, match="search needs a search service that answers JSON: set AGENTCELL_SEARCH_URL"):
        await complete_async('[[@search:x|"owls"]]', model=Script().model, journal=False)
