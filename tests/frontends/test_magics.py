"""`%%agent` / `%agent` in a fresh in-process InteractiveShell: every option, every subcommand, every error.

A plain `InteractiveShell` has no running loop between cells, exactly like terminal IPython, so
`run_cell_magic` runs the cell to the end with a printed transcript. Inside an anyio test the
loop is running, so the same call starts a background run, as in a kernel.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.frontends.handle import RunHandle
from agentcell.frontends.jupyter.blocking import wait_transformer
from agentcell.result import RunResult


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    shell.run_cell(
        "from agentcell import readonly, tool\n"
        "from pydantic_ai import RunContext\n"
        "seen = []\n"
        "@readonly\n"
        "def lookup(code: str) -> str:\n"
        "    '''Look a module up by its code.'''\n"
        "    seen.append(('lookup', code))\n"
        "    return f'{code}: led by Ada'\n"
        "@tool\n"
        "def enrol(ctx: RunContext[dict], code: str) -> str:\n"
        "    '''Enrol the current student on a module.'''\n"
        "    seen.append(('enrol', ctx.deps, code))\n"
        "    return 'enrolled'\n"
        "def helper(x: int) -> int:\n"
        "    return x\n"
        "number = 5\n"
    )
    yield shell
    shell.run_line_magic("agent", "stop")


def agent(ip: InteractiveShell, line: str, cell: str = "Who leads PSYC605?\n[[answer|use_tools=true]]") -> Any:
    return ip.run_cell_magic("agent", line, cell)


def test_terminal_mode_runs_in_the_cell_and_binds_the_result(ip: InteractiveShell, capsys: Any) -> None:
    agent(ip, "-o r -t lookup")
    result = ip.user_ns["r"]
    assert isinstance(result, RunResult) and result.status == "completed"
    assert ip.user_ns["_agent_run"] is result
    out = capsys.readouterr().out
    assert "offline default model" in out and '→ lookup({"code": "PSYC605"})' in out
    assert "PSYC605: led by Ada" in result.answer


def test_tools_default_to_every_decorated_callable_never_undecorated_ones(ip: InteractiveShell) -> None:
    schemas = ip.run_line_magic("agent", "tools")
    assert sorted(schemas) == ["enrol", "lookup"]
    assert schemas["lookup"] == {
        "description": "Look a module up by its code.",
        "parameters": {"additionalProperties": False, "properties": {"code": {"type": "string"}},
                       "required": ["code"], "type": "object"},
        "readonly": True, "approve": False,
    }
    assert "ctx" not in json.dumps(schemas["enrol"]["parameters"])  # RunContext is not in the schema
    assert sorted(ip.run_line_magic("agent", "tools helper")) == ["helper"]  # named ones may be undecorated


def test_tools_may_name_a_pydantic_ai_toolset(ip: InteractiveShell) -> None:
    """`--tools` naming a toolset (an MCP server, a `FunctionToolset`) hands it to the run's `toolsets=`."""
    ip.run_cell(
        "from pydantic_ai.toolsets import FunctionToolset\n"
        "def lookup_remote(code: str) -> str:\n"
        "    '''Look a module up by its code, remotely.'''\n"
        "    seen.append(('remote', code))\n"
        "    return f'{code}: led by Grace'\n"
        "remote = FunctionToolset([lookup_remote])\n"
    )
    agent(ip, "-o r -t remote")
    assert ("remote", "PSYC605") in ip.user_ns["seen"]
    assert "PSYC605: led by Grace" in ip.user_ns["r"].answer


def test_context_expression_feeds_the_template(ip: InteractiveShell) -> None:
    agent(ip, "-o r --context \"{'who': 'Grace'}\"", "Say hello to {{ who }} ({{ number }}).\n[[answer]]")
    assert "Say hello to Grace (5)." in ip.user_ns["r"].answer


def test_deps_reach_tools_through_run_context(ip: InteractiveShell) -> None:
    agent(ip, "-o r -t enrol --deps \"{'student': 's1'}\"", "Enrol me on PSYC605.\n[[answer|use_tools=true]]")
    assert ("enrol", {"student": "s1"}, "PSYC605") in ip.user_ns["seen"]


@pytest.mark.parametrize(("line", "limits"), [
    ("--max-iter 3", {"requests": 3, "tool_calls": 20, "output_tokens": 250_000}),
    ("--max-calls 4 --max-tokens 999", {"requests": 20, "tool_calls": 4, "output_tokens": 999}),
], ids=["max-iter", "max-calls-and-tokens"])
def test_budget_flags_set_the_ceiling(ip: InteractiveShell, line: str, limits: dict[str, int]) -> None:
    agent(ip, f"-o r {line}")
    got = ip.user_ns["r"].limits
    assert {"requests": got.requests, "tool_calls": got.tool_calls, "output_tokens": got.output_tokens} == limits


def test_config_sets_defaults_and_flags_override(ip: InteractiveShell) -> None:
    ip.run_line_magic("agent", "config max_iter=7 model=offline:fast")
    agent(ip, "-o r")
    assert ip.user_ns["r"].limits.requests == 7 and ip.user_ns["r"].model == "offline:fast"
    ip.run_line_magic("config", "AgentMagics.max_calls = 9")
    agent(ip, "-o r --max-iter 2")
    assert (ip.user_ns["r"].limits.requests, ip.user_ns["r"].limits.tool_calls) == (2, 9)


def test_approve_writes_asks_before_a_non_readonly_tool(ip: InteractiveShell, capsys: Any) -> None:
    agent(ip, "-o r -t enrol --approve writes --deps {}", "Enrol me on PSYC605.\n[[answer|use_tools=true]]")
    assert "approval needed for enrol" in capsys.readouterr().out
    assert not any(item[0] == "enrol" for item in ip.user_ns["seen"])  # denied: the tool never ran


def test_model_may_name_a_notebook_model_object(ip: InteractiveShell) -> None:
    ip.run_cell(
        "from pydantic_ai.models.function import FunctionModel\n"
        "from pydantic_ai.messages import ModelResponse, TextPart\n"
        "asked = []\n"
        "async def reply(messages, info):\n"
        "    asked.append([p.content for m in messages for p in m.parts if hasattr(p, 'content')])\n"
        "    yield f'answer {len(asked)}'\n"
        "scripted = FunctionModel(stream_function=reply)\n"
    )
    agent(ip, "-o r -m scripted", "Hi.\n[[answer]]")
    assert ip.user_ns["r"].answer == "answer 1"


def test_continue_sends_the_previous_transcript(ip: InteractiveShell) -> None:
    test_model_may_name_a_notebook_model_object(ip)
    agent(ip, "-o second -m scripted --continue r", "Second question.\n[[answer]]")
    assert ip.user_ns["asked"][-1] == ["Hi.", "answer 1", "Second question."]


def test_export_writes_json_and_openai_messages(ip: InteractiveShell, tmp_path: Path) -> None:
    pytest.importorskip("anyio")
    ip.run_cell("import asyncio")
    # Export reads a RunHandle; start one in a loop and wait for it.
    ip.run_cell(
        "async def _go():\n"
        "    get_ipython().run_cell_magic('agent', '-o h -q', 'Hi.\\n[[answer]]')\n"
        "    await h\n"
        "asyncio.run(_go())"
    )
    assert isinstance(ip.user_ns["h"], RunHandle) and ip.user_ns["h"].widget is None  # --quiet: no widget
    full, openai = tmp_path / "run.json", tmp_path / "run.openai.json"
    assert ip.run_line_magic("agent", f"export h {full}") == str(full)
    ip.run_line_magic("agent", f"export h {openai}")
    assert json.loads(full.read_text())["status"] == "completed"
    messages = json.loads(openai.read_text())
    assert [m["role"] for m in messages] == ["user", "assistant"]


@pytest.mark.parametrize(("line", "cell", "message"), [
    ("--max-iter 0", None, "--max-iter must be a positive whole number, got 0"),
    ("--context 5", None, "--context must evaluate to a dict, got int"),
    ("--context 1/0", None, "--context '1/0' failed: ZeroDivisionError: division by zero"),
    ("-t missing", None, "--tools names 'missing', which is not defined in the notebook"),
    ("-t number", None, "--tools names 'number', which is a int, not a callable"),
    ("--continue nope", None, "--continue 'nope': no finished run by that name (bind one with -o nope)"),
    ("-m openai:gpt-4o-mini", None,
     "model 'openai:gpt-4o-mini' needs the environment variable OPENAI_API_KEY; set it before starting "
     "Jupyter, or with os.environ['OPENAI_API_KEY'] = getpass.getpass() (not %env"),
    ("-m offline:warp", None, "unknown offline pace 'warp'; use 'offline', 'offline:fast' or 'offline:slow'"),
    ("", "Hello {{ nmber }}\n[[answer]]", "did you mean 'number'?"),
    ("", "Hi.\ntwo [[answer", "<%%agent cell>, line 3, column 5: unclosed slot: '[[' has no matching ']]'\n"
                               "    two [[answer\n        ^"),
], ids=["max-iter-0", "context-not-dict", "context-raises", "tool-missing", "tool-not-callable",
        "continue-unknown", "missing-key", "bad-offline-pace", "undefined-variable", "template-syntax"])
def test_bad_input_is_a_usage_error(ip: InteractiveShell, line: str, cell: str | None, message: str) -> None:
    with pytest.raises(UsageError) as exc:
        agent(ip, line, cell or "Hi.\n[[answer]]")
    assert message in str(exc.value)
    assert "Traceback" not in str(exc.value)


@pytest.mark.parametrize(("line", "message"), [
    ("bogus", "unknown %agent command 'bogus'; use one of: help, config, tools, stop, show, export, journal, fork, mcp"),
    ("config max_iter=x", "%agent config max_iter needs a whole number, got 'x'"),
    ("config colour=red", "%agent config takes key=value with key in model, max_iter, max_calls, max_tokens, "
                          "approve, interrupt_stops_runs; got 'colour=red'"),
    ("config approve=always", "%agent config approve must be none or writes, got 'always'"),
    ("show nope", "'nope' is not a run handle; start a run with %%agent -o nope"),
    ("export nope", "usage: %agent export NAME PATH   (PATH ending .openai.json → OpenAI messages, .html → a "
                    "standalone lesson; several NAMEs may go into one lesson)"),
    ("stop a b", "usage: %agent stop [all | NAME]"),
    ("tools missing", "--tools names 'missing', which is not defined in the notebook"),
], ids=["unknown", "config-int", "config-key", "config-approve", "show", "export", "stop", "tools"])
def test_bad_subcommands_are_usage_errors(ip: InteractiveShell, line: str, message: str) -> None:
    with pytest.raises(UsageError) as exc:
        ip.run_line_magic("agent", line)
    assert str(exc.value) == message


def test_argparse_errors_are_usage_errors(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="unrecognized arguments: --nope"):
        agent(ip, "--nope")
    with pytest.raises(UsageError, match="argument --max-iter: invalid int value: 'abc'"):
        agent(ip, "--max-iter abc")
    with pytest.raises(UsageError, match="argument --approve: invalid choice: 'maybe'"):
        agent(ip, "--approve maybe")


@pytest.mark.parametrize(("cell", "expected"), [
    (["%%agent --wait -o r\n", "Hi [[answer]]\n"],
     ["await get_ipython().magics_manager.registry['AgentMagics'].agent_wait('--wait -o r', 'Hi [[answer]]\\n')\n"]),
    (["%%agent -o r\n", "Hi --wait [[answer]]\n"], None),
    (["%%agentx --wait\n", "x\n"], None),
    (["print('--wait')\n"], None),
], ids=["wait", "wait-in-body-only", "other-magic", "not-a-magic"])
def test_wait_transformer_rewrites_only_wait_cells(cell: list[str], expected: list[str] | None) -> None:
    assert wait_transformer(cell) == (expected if expected is not None else cell)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_background_handle_is_awaitable_cancellable_and_readable(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o h -q -m offline", "Explain photosynthesis.\n[[answer]]")
    handle = ip.user_ns["h"]
    assert isinstance(handle, RunHandle) and handle.status == "running"
    with pytest.raises(RuntimeError, match="the run is still going"):
        handle.result()
    import asyncio

    while not handle.answer:
        await asyncio.sleep(0.01)
    handle.cancel()
    result = await handle
    assert result.status == "stopped" and handle.status == "stopped"
    assert handle.result() is result
    assert handle.results == {} and handle.answer == result.partial["answer"]
    assert ip.user_ns["_agent_run"] is handle


@pytest.mark.anyio
async def test_background_results_and_usage_after_completion(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o h -q", "Who leads PSYC605?\n[[answer|use_tools=true]]")
    result = await ip.user_ns["h"]
    handle = ip.user_ns["h"]
    assert result.status == "completed"
    assert handle.results == {"answer": result.answer} and "PSYC605: led by Ada" in handle.answer
    assert handle.usage.requests == 2 and handle.usage.tool_calls == 1


@pytest.mark.anyio
async def test_widget_records_template_provenance(ip: InteractiveShell) -> None:
    from agentcell.template import compile_template

    cell = "Who leads PSYC605?\n[[answer]]"
    ip.run_cell_magic("agent", "-o h -m offline:fast", cell)
    handle = ip.user_ns["h"]
    await handle
    assert handle.widget.output_metadata["template_sha256"] == compile_template(cell).sha256
    assert handle.widget.output_metadata["status"] == "completed"


def test_show_rebuilds_a_run_from_its_journal(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcell.frontends.widget.widget import AgentWidget

    agent(ip, "-o r")
    shown: list[AgentWidget] = []
    monkeypatch.setattr(AgentWidget, "show", lambda self: shown.append(self))
    run_id = ip.user_ns["r"].run_id
    ip.run_line_magic("agent", f"show {run_id}")
    (widget,) = shown
    assert widget.status == "completed"
    assert widget.final[0]["kind"] == "run_started"
    assert widget.final[-1]["kind"] == "processing_complete" and widget.final[-1]["answer"] == ip.user_ns["r"].answer
    with pytest.raises(UsageError, match="no journal for run 'abcdef012345'"):
        ip.run_line_magic("agent", "show abcdef012345")


@pytest.mark.anyio
async def test_handle_answer_mid_run_leaves_out_retracted_narration(ip: InteractiveShell) -> None:
    # The model narrates, calls a tool (the narration is retracted), then streams its answer slowly.
    ip.run_cell(
        "import asyncio, json\n"
        "from pydantic_ai.models.function import FunctionModel, DeltaToolCall\n"
        "async def narrate(messages, info):\n"
        "    if len(messages) == 1:\n"
        "        yield 'Let me look that up. '\n"
        "        yield {1: DeltaToolCall(name='lookup', json_args=json.dumps({'code': 'X1'}), tool_call_id='c1')}\n"
        "        return\n"
        "    yield 'X1 is led '\n"
        "    await asyncio.sleep(30)\n"
        "    yield 'by Ada.'\n"
        "narrator = FunctionModel(stream_function=narrate, model_name='narrator')\n"
    )
    ip.run_cell_magic("agent", "-o h -q -m narrator -t lookup", "Who leads X1?\n[[answer|use_tools=true]]")
    handle = ip.user_ns["h"]
    import asyncio

    for _ in range(500):
        if handle.answer == "X1 is led ":
            break
        await asyncio.sleep(0.01)
    assert handle.answer == "X1 is led "
    assert handle.partial == "X1 is led "
    narration = [i for r in handle.transcript.slots["answer"].rounds.values() for i in r.items if i["type"] == "narration"]
    assert [i["text"] for i in narration] == ["Let me look that up. "]
    handle.cancel()
    result = await handle
    assert result.status == "stopped" and result.partial == {"answer": "X1 is led "}


def test_budget_hints_in_a_cell_name_the_cell_flags_and_slot_options(ip: InteractiveShell, capsys: Any) -> None:
    agent(ip, "-o r -q -t lookup --max-iter 1")
    result = ip.user_ns["r"]
    assert result.status == "budget_exhausted"
    assert result.error.endswith(
        "raise it with --max-iter N on the %%agent line, or set max_iter=N on the slot "
        "(e.g. [[answer|max_iter=3]]) so its last request is answered without tools"
    )
    assert "UsageLimits" not in result.error
    agent(ip, "-o r2 -q -t lookup --max-iter 2", "Who leads PSYC605?\n[[answer|use_tools=true, max_iter=5]]")
    assert ip.user_ns["r2"].warnings[0].endswith("using 2 (raise it with --max-iter 5 on the %%agent line)")


def test_config_shows_the_model_the_next_cell_uses(ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    assert ip.run_line_magic("agent", "config")["model"] == "offline:fast (from AGENTCELL_MODEL)"
    monkeypatch.delenv("AGENTCELL_MODEL")
    assert ip.run_line_magic("agent", "config")["model"] == "offline (default)"
    assert ip.run_line_magic("agent", "config model=offline:slow")["model"] == "offline:slow"


def test_tools_table_reads_as_a_table_and_stays_a_dict(ip: InteractiveShell) -> None:
    table = ip.run_line_magic("agent", "tools lookup")
    assert table.text() == (
        "lookup(code: string)   [readonly]\n"
        "    Look a module up by its code.\n"
        '    {\n      "additionalProperties": false,\n      "properties": {\n        "code": {\n'
        '          "type": "string"\n        }\n      },\n      "required": [\n        "code"\n      ],\n'
        '      "type": "object"\n    }'
    )
    html = table._repr_html_()
    assert "<code>lookup(code: string)</code>" in html and "<td>readonly</td>" in html and "<summary>JSON schema" in html
    assert table["lookup"]["readonly"] is True  # still the dict code reads


def test_model_flag_naming_nothing_says_what_it_tried(ip: InteractiveShell) -> None:
    ip.run_cell("from pydantic_ai.models.test import TestModel\ntutor_model = TestModel()")
    with pytest.raises(UsageError) as exc:
        agent(ip, "-m tutor_modle")
    assert str(exc.value) == (
        "-m tutor_modle: no notebook variable 'tutor_modle' holds a pydantic-ai Model, and 'tutor_modle' is not a "
        "model name (those look like 'openai:gpt-4o-mini', 'anthropic:claude-sonnet-4-5' or 'offline'); "
        "did you mean 'tutor_model'?"
    )


def test_a_tool_without_a_docstring_gets_a_visible_warning(ip: InteractiveShell) -> None:
    ip.run_cell("@tool\ndef silent(code: str) -> str:\n    return code\n")
    agent(ip, "-o r -q -t silent")
    assert ip.user_ns["r"].warnings[0].startswith(
        "tool 'silent' has no docstring, so the model gets no description of what it does")


@pytest.mark.anyio
async def test_stop_all_says_which_runs_it_stopped(ip: InteractiveShell) -> None:
    ip.run_cell_magic("agent", "-o slow_one -q -m offline:slow", "Explain photosynthesis.\n[[answer]]")
    stopped = ip.run_line_magic("agent", "stop all")
    assert stopped == 1 and stopped.sentence() == "Stopped 1 run: slow_one."
    await ip.user_ns["slow_one"]
    assert ip.run_line_magic("agent", "stop").sentence() == "No run was going; nothing to stop."


@pytest.mark.anyio
async def test_agent_stop_also_stops_the_runs_show_started(ip: InteractiveShell) -> None:
    from agentcell import show
    from agentcell.frontends.registry import PYTHON_RUNS

    view = show("Explain photosynthesis. [[answer]]", model="offline:slow")
    (shown,) = [h for h in PYTHON_RUNS.runs.values() if getattr(h, "widget", None) is view]
    ip.run_cell_magic("agent", "-o slow_two -q -m offline:slow", "Explain respiration.\n[[answer]]")
    stopped = ip.run_line_magic("agent", "stop")
    assert stopped == 2 and stopped.sentence() == f"Stopped 2 runs: slow_two, run {shown.run_id}."
    assert (await shown).status == (await ip.user_ns["slow_two"]).status == "stopped"


def test_terminal_export_and_show_accept_the_result_o_bound(
    ip: InteractiveShell, capsys: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCELL_JOURNAL", str(tmp_path / "journal"))
    agent(ip, "-o r -t lookup")  # no running loop: terminal mode binds a RunResult
    assert isinstance(ip.user_ns["r"], RunResult)
    out = tmp_path / "r.openai.json"
    ip.run_line_magic("agent", f"export r {out}")
    assert json.loads(out.read_text())[-1]["role"] == "assistant"
    capsys.readouterr()
    ip.run_line_magic("agent", "show r")
    shown = capsys.readouterr().out
    assert shown.startswith("%%agent · offline:fast · done") and 'tool lookup({"code": "PSYC605"})' in shown


# ---- --types and --include-path -------------------------------------------------------------------

SCRIPTED_OUTPUT = (
    "import json\n"
    "from pydantic_ai.models.function import FunctionModel, DeltaToolCall\n"
    "prompts = []\n"
    "async def fill(messages, info):\n"
    "    prompts.append([p.content for m in messages for p in m.parts if hasattr(p, 'content')])\n"
    "    if info.output_tools:\n"
    "        args = {'response': {'name': 'Ada Lovelace', 'age': 36, 'skills': ['maths']}}\n"
    "        yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args=json.dumps(args))}\n"
    "    else:\n"
    "        yield 'plain answer'\n"
    "filler = FunctionModel(stream_function=fill)\n"
)


def test_types_flag_gives_a_slot_an_instance_of_the_yaml_type(ip: InteractiveShell, tmp_path: Path) -> None:
    (tmp_path / "person.yaml").write_text(
        "name: person\ndescription: A person\nfields:\n  name: {type: str, required: true}\n"
        "  age: {type: int, ge: 0}\n  skills: list[str]\n  town: str\n"
    )
    ip.run_cell(SCRIPTED_OUTPUT)
    agent(ip, f"-o r -m filler --types {tmp_path / 'person.yaml'}", "Ada, 36, a mathematician.\n[[person:who]]")
    result = ip.user_ns["r"]
    assert result.status == "completed", result.error
    who = result["who"]
    assert type(who).__name__ == "person" and type(who).__doc__ == "A person"
    assert (who.name, who.age, who.skills, who.town) == ("Ada Lovelace", 36, ["maths"], None)  # no `!`: town may be left out


def test_a_bad_types_file_is_a_one_line_usage_error_naming_file_and_line(ip: InteractiveShell, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: person\nfields:\n  name: str\n  age: integr\n")
    ip.run_cell(SCRIPTED_OUTPUT)
    with pytest.raises(UsageError) as caught:
        agent(ip, f"-m filler --types {bad}", "[[person:who]]")
    assert str(caught.value) == (
        f"{bad}, line 4: type 'person': unknown field type 'integr'; did you mean 'integer'? (known: str, string, "
        "int, integer, float, number, bool, boolean, date, datetime, time, timedelta, duration, list[T], "
        "optional[T], person)"
    )
    assert ip.user_ns["prompts"] == []  # nothing reached the model


def test_include_path_is_searched_relative_to_the_notebook_folder(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the kernel's working directory is the notebook's folder
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "rubrics" / "essay.sd").write_text("Grade strictly.\n")
    (tmp_path / "shared" / "tone.sd").write_text("Be kind.\n")
    ip.run_cell(SCRIPTED_OUTPUT)
    cell = '<include src="essay.sd"/>\n{% include "tone.sd" %}\nThe essay.\n[[grade]]'
    with pytest.raises(UsageError, match=r"included file 'essay\.sd' not found"):
        agent(ip, "-m filler", cell)
    agent(ip, "-o r -m filler --include-path rubrics --include-path shared", cell)
    assert ip.user_ns["r"].status == "completed"
    assert ip.user_ns["prompts"] == [["Grade strictly.\n\nBe kind.\n\nThe essay."]]


def test_an_error_in_an_included_file_points_at_that_file(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "broken.sd").write_text("Fine line.\nA [[bad\n")
    with pytest.raises(UsageError) as caught:
        agent(ip, "--include-path parts", 'Start.\n<include src="broken.sd"/>\n[[answer]]')
    message = str(caught.value)
    assert message.startswith(str(Path("parts") / "broken.sd") + ", line 2, column 3: ")  # its own numbering
    assert "unclosed slot" in message and "\n    A [[bad\n      ^" in message and "%%agent" not in message


def test_build_spec_takes_run_options_and_adds_only_the_cells_own_fields(ip: InteractiveShell) -> None:
    """Options no flag sets (here `now`, `compaction`, `journal`, `run_id`) reach the run untouched;
    the namespace, `--tools` names and cassettes are the cell's part."""
    from datetime import datetime

    from agentcell.frontends.jupyter.cell import build_spec
    from agentcell.options import RunOptions

    def extra(text: str) -> str:
        """An extra tool given as an option."""
        return text

    now = datetime(2026, 1, 2, 3, 4)
    given = RunOptions(context={"number": 7, "who": "Grace"}, tools=(extra,), now=now, compaction=None,
                       journal=False, run_id="cell-run", model="offline:fast")
    spec = build_spec("Hi {{ who }} ({{ number }}) [[answer]]", given, user_ns=ip.user_ns, tools=["lookup"])
    assert spec.options.context is not None
    assert spec.options.context["number"] == 7 and spec.options.context["who"] == "Grace"  # options win
    assert list(spec.options.tools) == [ip.user_ns["lookup"], extra]
    assert (spec.options.now, spec.options.compaction, spec.options.journal, spec.options.run_id) == (
        now, None, False, "cell-run")
    assert spec.options.model == "offline:fast"


def test_cell_options_turn_the_flags_into_run_options() -> None:
    from pydantic_ai.usage import UsageLimits

    from agentcell.frontends.jupyter.cell import cell_options
    from agentcell.options import RunOptions

    deps = {"student": "s1"}
    got = cell_options(model="test", context={"a": 1}, deps=deps, max_iter=3, max_calls=4, max_tokens=5,
                       approve="writes")
    assert got == RunOptions(model="test", context={"a": 1}, deps=deps, deps_type=dict, approve_writes=True,
                             limits=UsageLimits(request_limit=3, tool_calls_limit=4, output_tokens_limit=5))


@pytest.mark.parametrize("flag", ["--step", "--predict"])
def test_a_stepped_cell_never_waits_headless(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    """Headless, a plain `%%agent` cell waits for its run; a stepped one waits for Next, which only a later cell's
    `handle.step()` can give there, so its cell must return (it waited for ever before)."""
    from agentcell.frontends.jupyter import blocking

    monkeypatch.setattr(blocking, "_waits_headless", lambda: True)
    plain = ["%%agent -o h\n", "Hi [[answer]]\n"]
    assert wait_transformer(plain) != plain  # headless: rewritten into a wait
    stepped = [f"%%agent -o h {flag}\n", "Hi [[answer]]\n"]
    assert wait_transformer(stepped) == stepped


@pytest.mark.parametrize(("line", "mode"), [("", "auto"), ("--output-mode prompted", "prompted")])
def test_output_mode_flag_reaches_the_run_options(ip: InteractiveShell, line: str, mode: str) -> None:
    magics = ip.magics_manager.registry["AgentMagics"]
    spec = magics.prepare(line, "How many? [[int:n]]")
    assert spec.options.output_mode == mode


def test_a_bad_output_mode_is_a_usage_error(ip: InteractiveShell) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="invalid choice: 'json'"):
        ip.run_cell_magic("agent", "--output-mode json", "How many? [[int:n]]")
