"""struckdown's agent-loop page (seed 000): its code examples run here with only the imports changed.

Each example below is copied verbatim from the page, `import struckdown as sd` and all. `as_agentcell`
makes the only edits: `struckdown` → `agentcell` in the import lines, and the page's `...` ("and the
other arguments", a syntax error as written) becomes `**rest`, the arguments the earlier examples pass.
Everything else the page leaves to the reader (`prompt`, `model`, `credentials`, `database`, `TOOLS`,
`User`, `request`, `reader_pressed_stop`) is supplied by `page`, once per backend: a scripted model, and
the OpenAI-compatible fixture server reached with `credentials=` (base URL + dummy key), whose key must
show up nowhere: not in printed output, a result, an error or the journal.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

import agentcell

from .conftest import KEY, MODULES, Backend, Reason, Say, ServerBackend, Use, Wait, eventually, journal_text

# ---- the page's examples, verbatim ------------------------------------------------------------

TEMPLATE = """# The question
{{ question }}

[[!answer|use_tools=true, max_iter=3]]"""

TOOL_DEFINITION = '''import struckdown as sd
from struckdown import readonly

@readonly
def lookup_module(module_code: str) -> str:
    """Look a module up by its code. Returns its title and who leads it."""
    return database.modules.get(module_code)
'''

TOOL_CALL = """result = sd.complete(
    prompt,
    context={"question": "Who leads PSYC605?"},
    model=model,
    credentials=credentials,
    tools=[lookup_module],
)
"""

DEPS = '''from dataclasses import dataclass
from pydantic_ai import RunContext

@dataclass
class Deps:
    user: User

@readonly
def my_deadlines(ctx: RunContext[Deps]) -> list[dict]:
    """The asker's own assessment deadlines."""
    return deadlines_for(ctx.deps.user)

sd.complete(prompt, tools=[my_deadlines], deps=Deps(user=request.user),
            deps_type=Deps, ...)
'''

BUDGETS = """from pydantic_ai.usage import UsageLimits

sd.complete(prompt, tools=TOOLS,
            limits=UsageLimits(request_limit=4, tool_calls_limit=8), ...)
"""

WATCHING = """from struckdown.incremental import (SlotRetracted, SlotStreamStart,
                                    ThinkingDelta, TokenDelta, ToolCompleted,
                                    ToolStarted)

async for event in sd.complete_incremental_async(
    prompt, model=model, credentials=credentials,
    context=ctx, tools=TOOLS, stream=True,
):
    if isinstance(event, ToolStarted):
        print(f"calling {event.tool_name}({event.arguments})")
    elif isinstance(event, ToolCompleted):
        print(f"  -> {event.output}")
    elif isinstance(event, ThinkingDelta):
        print(event.delta, end="")
    elif isinstance(event, TokenDelta):
        print(event.delta, end="")
    elif isinstance(event, SlotRetracted):
        print("\\n[take that back]")
"""

STOPPING = """gen = sd.complete_incremental_async(prompt, tools=TOOLS, ...)
async for event in gen:
    if reader_pressed_stop:
        break
await gen.aclose()   # cancels the provider call, rather than paying for it
"""

QUESTION = {"question": "Who leads PSYC605?"}
ANSWER = "Dr Ada Byron leads PSYC605."


def as_agentcell(source: str) -> str:
    """The only edits: the imports name agentcell, and the page's `...` is the arguments it stands for."""
    out = source.replace("import struckdown as sd", "import agentcell as sd")
    out = out.replace("from struckdown.incremental import", "from agentcell.incremental import")
    out = out.replace("from struckdown import", "from agentcell import")
    return re.sub(r",\s*\.\.\.\)", ", **rest)", out)


def test_only_the_imports_and_the_elisions_change() -> None:
    for source in (TOOL_DEFINITION, TOOL_CALL, DEPS, BUDGETS, WATCHING, STOPPING):
        edited = as_agentcell(source)
        assert "struckdown" not in edited and "..." not in edited
        changed = [(a, b) for a, b in zip(source.splitlines(), edited.splitlines(), strict=True) if a != b]
        for before, after in changed:
            assert "struckdown" in before or "..." in before, (before, after)


# ---- the reader's side of the page ------------------------------------------------------------


@dataclass(frozen=True)
class User:
    name: str


class StopButton:
    """`reader_pressed_stop`: true once `pressed()` holds (read by the example's `if`)."""

    def __init__(self, pressed: Callable[[], bool]) -> None:
        self.pressed = pressed

    def __bool__(self) -> bool:
        return self.pressed()


def page(backend: Backend, *, prompt: str = TEMPLATE) -> dict[str, Any]:
    """What the page leaves to its reader, then the page's first example (its imports and tool) run."""
    seen: list[User] = []

    def deadlines_for(user: User) -> list[dict[str, str]]:
        seen.append(user)
        return [{"module": "PSYC605", "due": "Friday", "for": user.name}]

    ns: dict[str, Any] = {
        "__name__": "seed_000",
        "prompt": prompt,
        "model": backend.model,
        "credentials": backend.credentials,
        "ctx": QUESTION,
        "database": SimpleNamespace(modules=MODULES),
        "User": User,
        "request": SimpleNamespace(user=User("ada")),
        "deadlines_for": deadlines_for,
        "deadline_users": seen,
        "reader_pressed_stop": StopButton(lambda: backend.requests() >= 2),
    }
    ns["rest"] = {"model": ns["model"], "credentials": ns["credentials"], "context": ns["ctx"]}
    exec(compile(as_agentcell(TOOL_DEFINITION), "<seed 000: a tool>", "exec", dont_inherit=True), ns)
    ns["TOOLS"] = [ns["lookup_module"]]
    return ns


def run(source: str, ns: dict[str, Any]) -> None:
    exec(compile(as_agentcell(source), "<seed 000>", "exec", dont_inherit=True), ns)


async def run_async(source: str, ns: dict[str, Any]) -> None:
    """As a notebook cell or `python -m asyncio` runs it: top-level `async for` / `await` allowed."""
    code = compile(as_agentcell(source), "<seed 000>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    pending = eval(code, ns)
    if pending is not None:
        await pending


def assert_key_hidden(backend: Backend, *shown: object) -> None:
    """The dummy key reached the server (it refuses any other) and nothing we can see shows it."""
    if isinstance(backend, ServerBackend):
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in backend.server.chat_requests)
        assert [r.body["model"] for r in backend.main_requests()] == ["gpt-4o-mini"] * backend.requests()
    for thing in (*shown, journal_text()):
        assert KEY not in (thing if isinstance(thing, str) else repr(thing))


# ---- the examples ------------------------------------------------------------------------------


def test_a_tool_is_a_function(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    backend.script([Use("lookup_module", {"module_code": "PSYC605"})], [Say(ANSWER, pieces=3)])
    ns = page(backend)
    run(TOOL_CALL, ns)
    result = ns["result"]
    assert result["answer"] == result.answer == result.response == ANSWER  # by slot name, and as RunResult
    assert list(result.keys()) == ["answer"] and "answer" in result and result.status == "completed"
    assert backend.tools_offered() == [["lookup_module"], ["lookup_module"]]
    assert result.usage.tool_calls == 1
    assert_key_hidden(backend, result, result.to_json(), capsys.readouterr())


def test_per_run_state_with_deps(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    backend.script([Use("my_deadlines", {})], [Say("Your PSYC605 essay is due on Friday.")])
    ns = page(backend)
    run(DEPS, ns)
    assert ns["deadline_users"] == [User("ada")]  # the tool got `request.user` through ctx.deps
    assert backend.tools_offered() == [["my_deadlines"], ["my_deadlines"]]
    if isinstance(backend, ServerBackend):  # ctx is not in the schema: the model cannot set the user
        first, second = backend.main_requests()
        (schema,) = [t["function"]["parameters"] for t in first.body["tools"]]
        assert schema.get("properties", {}) == {}
        assert "'for': 'ada'" in second.messages[-1]["content"] or '"for":"ada"' in second.messages[-1]["content"]
    assert_key_hidden(backend, capsys.readouterr())


def test_budgets_a_template_lowers_the_ceiling(backend: Backend) -> None:
    backend.script(
        [Use("lookup_module", {"module_code": "PSYC601"})],
        [Use("lookup_module", {"module_code": "PSYC605"})],
        [Say(ANSWER)],
    )
    run(BUDGETS, page(backend))  # the template's max_iter=3 is under the ceiling of 4: it rules
    assert backend.tools_offered() == [["lookup_module"], ["lookup_module"], []]  # the last round answers
    assert_key_hidden(backend)


def test_budgets_without_max_iter_the_run_stops_at_the_ceiling(backend: Backend) -> None:
    backend.script(*([Use("lookup_module", {"module_code": f"PSYC60{i}"})] for i in range(1, 6)))
    with pytest.raises(agentcell.BudgetExhausted, match="request_limit of 4") as caught:
        run(BUDGETS, page(backend, prompt="# The question\n{{ question }}\n\n[[!answer|use_tools=true]]"))
    assert backend.requests() == 4 and caught.value.result.usage.requests == 4
    assert_key_hidden(backend, caught.value, str(caught.value))


def test_the_ceiling_is_a_ceiling_a_template_asking_for_more_gets_it_and_a_warning(backend: Backend) -> None:
    backend.script(*([Use("lookup_module", {"module_code": f"PSYC60{i}"})] for i in range(1, 4)), [Say(ANSWER)])
    ns = page(backend, prompt="# The question\n{{ question }}\n\n[[!answer|use_tools=true, max_iter=10]]")
    run(BUDGETS.replace("sd.complete(", "result = sd.complete(", 1), ns)  # the same call, its result kept
    assert backend.tools_offered() == [["lookup_module"]] * 3 + [[]]  # clamped to 4, the 4th answers
    assert ns["result"]["answer"] == ANSWER
    assert any("max_iter=10" in w for w in ns["result"].warnings)


@pytest.mark.anyio
async def test_watching_it_happen(backend: Backend, capsys: pytest.CaptureFixture[str]) -> None:
    backend.script(
        [Reason("I should look it up."), Use("lookup_module", {"module_code": "PSYC605"})],
        [Reason("Now answer."), Say(ANSWER, pieces=4)],
    )
    await run_async(WATCHING, page(backend))
    printed = capsys.readouterr().out
    assert printed == (
        "I should look it up.calling lookup_module({'module_code': 'PSYC605'})\n"
        "  -> Cognition and Emotion, led by Dr Ada Byron\n"
        f"Now answer.{ANSWER}"
    )
    assert_key_hidden(backend, printed)


@pytest.mark.anyio
async def test_watching_narration_before_a_tool_call_is_taken_back(
    backend: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    backend.script(
        [Say("Let me look that up."), Use("lookup_module", {"module_code": "PSYC605"})],
        [Say(ANSWER)],
    )
    await run_async(WATCHING, page(backend))
    printed = capsys.readouterr().out
    assert printed == (
        "Let me look that up.\n[take that back]\n"  # agentcell streams every round; the gathering one is withdrawn
        "calling lookup_module({'module_code': 'PSYC605'})\n"
        "  -> Cognition and Emotion, led by Dr Ada Byron\n"
        f"{ANSWER}"
    )


@pytest.mark.anyio
async def test_stopping_a_run_cancels_the_call_in_flight(backend: Backend) -> None:
    backend.script(
        [Use("lookup_module", {"module_code": "PSYC605"})],
        [Say("Dr Ada "), Wait(30), Say("Byron, after a long wait.")],
    )
    ns = page(backend)
    await run_async(STOPPING, ns)
    assert backend.requests() == 2  # the reader pressed stop while the answer was being written
    assert await eventually(backend.cancelled)  # the scripted stream was cancelled / the server saw the close
    if isinstance(backend, ServerBackend):
        answer_request = backend.main_requests()[1]
        assert answer_request.outcome == "disconnected" and answer_request.disconnected_at is not None
    assert_key_hidden(backend)


def test_the_page_runs_against_agentcell_not_struckdown() -> None:
    ns: dict[str, Any] = {}
    source = as_agentcell("import struckdown as sd\nfrom struckdown import readonly")
    exec(compile(source, "<seed>", "exec", dont_inherit=True), ns)
    assert ns["sd"] is agentcell and ns["readonly"] is agentcell.readonly
