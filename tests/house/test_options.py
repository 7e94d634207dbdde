"""Every surface that takes run options as keywords lists exactly `RunOptions`' fields and passes them on.

The keywords are typed once (`options.RunOptionsKwargs` and the surfaces' subsets, PEP 692); the tests pin
those to `RunOptions`, each public function's signature (as `help()` and completion read it) to them, and
an unknown keyword to one sentence naming it and its close matches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack, get_args, get_origin, get_type_hints

import pytest

import agentcell
from agentcell import batch, engine
from agentcell.engine import setup
from agentcell.frontends import show as handle
from agentcell.options import RunOptions, RunOptionsKwargs
from agentcell.template import compile_template

FIELDS = [f.name for f in dataclasses.fields(RunOptions)]

# Surface → (keywords it adds after the options, options it leaves out and why). The struckdown-named
# functions add struckdown's front-only keywords: `credentials` (folded into `model` before `RunOptions`
# is built, so no key is held by the options), and for the generator `stream` (token events or not).
SURFACES: dict[str, tuple[Callable[..., Any], list[str], set[str]]] = {
    "engine.start_run": (engine.start_run, [], set()),
    # Lesson mode's `step` / `predict` need someone to press Next: not for the functions that run to the end,
    # nor for `stream`, whose consumer holds no handle to press it with.
    "stream": (engine.stream, [], {"step", "predict"}),
    "complete_async": (engine.complete_async, ["on_halt", "credentials"], {"step", "predict"}),
    "complete": (engine.complete, ["on_halt", "credentials"], {"step", "predict"}),
    "complete_incremental_async": (engine.complete_incremental_async, ["on_halt", "credentials", "stream"],
                                   {"step", "predict"}),
    # `agentcell.start_run`: the engine's, returning the `RunHandle` that `-o` binds.
    "start_run": (handle.start_run, [], set()),
    # The widget's Approve / Deny buttons answer approvals; `key` (which earlier run this one replaces) is the front's.
    "show": (handle.show, ["key"], {"approve"}),
    # Per row: a row is a run of its own, so one run's `history`, `run_id` and `resume_from` are not options here.
    # `models=` (with `names=`): one batch per model, as `compare(..., over=rows)`.
    "map": (batch.map, ["concurrency", "max_rows", "max_cost", "keep", "resume", "client", "expect", "evaluators", "baseline",
                        "models", "names"],
            {"history", "run_id", "resume_from", "cost_limit", "step", "predict"}),
    # One run per model: `models=` takes the place of `model`; nobody steps several models' runs at once.
    "compare": (batch.compare, ["models", "names", "record", "replay", "over", "concurrency", "max_rows", "expect",
                                "evaluators"],
                {"model", "step", "predict"}),
}
POSITIONAL = {"map": ["template", "rows"]}


@pytest.mark.parametrize("name", list(SURFACES), ids=list(SURFACES))
def test_keywords_are_the_run_options_in_order_with_their_defaults(name: str) -> None:
    fn, extra, left_out = SURFACES[name]
    params = list(inspect.signature(fn).parameters.values())
    head = POSITIONAL.get(name, ["template"])
    assert [p.name for p in params[: len(head)]] == head
    assert all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in params[: len(head)])
    keywords = params[len(head) :]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in keywords)
    assert [p.name for p in keywords] == [f for f in FIELDS if f not in left_out] + extra
    defaults = RunOptions()
    for p in keywords[: len(keywords) - len(extra)]:
        assert p.default == getattr(defaults, p.name), p.name


def test_run_options_is_frozen_keyword_only_and_documented() -> None:
    params = RunOptions.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and RunOptions.__slots__
    with pytest.raises(TypeError):
        RunOptions("ctx")  # type: ignore[misc]
    source = inspect.getsource(RunOptions)
    for name in FIELDS:  # an attribute docstring right under every field
        line = next(line for line in source.splitlines() if line.strip().startswith(f"{name}:"))
        following = source.splitlines()[source.splitlines().index(line) + 1].strip()
        assert following.startswith('"""'), name


class _Captured(Exception):
    def __init__(self, options: RunOptions) -> None:
        self.options = options


def _sentinels() -> dict[str, Any]:
    """A distinct value for every option, so a keyword dropped on the way shows as a default."""
    return {name: object() for name in FIELDS}


def _capture(_template: Any, options: RunOptions) -> Any:
    raise _Captured(options)


async def _call_in_loop(name: str, values: dict[str, Any]) -> None:
    fn = SURFACES[name][0]
    if name in ("stream", "complete_incremental_async"):
        async for _ in fn("Hi [[answer]]", **values):
            pass
    elif name == "complete_async":
        await fn("Hi [[answer]]", **values)
    else:
        fn("Hi [[answer]]", **values)


@pytest.mark.parametrize("name", ["engine.start_run", "stream", "complete_async", "complete",
                                  "complete_incremental_async"])
def test_engine_surfaces_pass_every_keyword_on(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "start", _capture)
    monkeypatch.setattr(setup, "start", _capture)
    values = {key: value for key, value in _sentinels().items() if key not in SURFACES[name][2]}
    with pytest.raises(_Captured) as caught:
        if name == "complete":  # the sync form runs its own loop
            engine.complete("Hi [[answer]]", **values)
        else:
            asyncio.run(_call_in_loop(name, values))
    assert caught.value.options == RunOptions(**values)


def test_show_passes_every_keyword_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunOptions] = []

    def fake_launch(spec: Any, **_: Any) -> Any:
        seen.append(spec.options)
        raise _Captured(spec.options)

    monkeypatch.setattr(handle, "launch", fake_launch)
    values = {name: value for name, value in _sentinels().items() if name != "approve"}


    async def call() -> None:  # show() needs a running loop
        handle.show(compile_template("Hi [[answer]]"), **values)

    with pytest.raises(_Captured):
        asyncio.run(call())
    assert seen == [RunOptions(**values)]


def test_start_run_passes_every_keyword_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[RunOptions] = []

    def fake_launch(spec: Any, **_: Any) -> Any:
        seen.append(spec.options)
        raise _Captured(spec.options)

    monkeypatch.setattr(handle, "launch", fake_launch)
    values = _sentinels()

    async def call() -> None:  # start_run() needs a running loop
        handle.start_run(compile_template("Hi [[answer]]"), **values)

    with pytest.raises(_Captured):
        asyncio.run(call())
    assert seen == [RunOptions(**values)]


def test_run_options_is_public() -> None:
    assert agentcell.RunOptions is RunOptions


def _takes_run_options(fn: Callable[..., Any]) -> bool:
    """Whether a function takes run options: it unpacks a keywords TypedDict, or lists several fields itself."""
    raw = inspect.get_annotations(fn)
    return "Unpack[" in str(raw.get("options", "")) or len(set(inspect.signature(fn).parameters) & set(FIELDS)) >= 3


def test_every_public_function_that_takes_run_options_is_pinned() -> None:
    public = {name: getattr(agentcell, name) for name in agentcell.__all__}
    taking = {name for name, obj in public.items() if inspect.isfunction(obj) and _takes_run_options(obj)}
    pinned = {name for name in SURFACES if name in public}
    assert taking == pinned == {"compare", "complete", "complete_async", "complete_incremental_async", "map", "show",
                                "start_run", "stream"}
    for name in pinned:
        assert public[name] is SURFACES[name][0]


def _unpacked(fn: Callable[..., Any]) -> type:
    (typed,) = get_args(inspect.get_annotations(fn, eval_str=True)["options"])
    return typed  # type: ignore[no-any-return]


def test_the_keywords_typed_dict_is_run_options_field_for_field() -> None:
    fields = get_type_hints(RunOptions)
    keys = get_type_hints(RunOptionsKwargs)
    assert list(RunOptionsKwargs.__required_keys__) == []  # every option may be left out
    assert sorted(keys) == sorted(fields)
    for name, hint in keys.items():
        assert hint == fields[name], name


@pytest.mark.parametrize("name", list(SURFACES), ids=list(SURFACES))
def test_each_surface_unpacks_the_typed_options_it_lists(name: str) -> None:
    fn, extra, left_out = SURFACES[name]
    raw = inspect.get_annotations(fn, eval_str=True)
    assert get_origin(raw["options"]) is Unpack
    typed = _unpacked(fn)
    own = {p for p in raw if p not in ("options", "return")}
    assert set(typed.__optional_keys__) == set(FIELDS) - left_out - own  # type: ignore[attr-defined]
    assert not typed.__required_keys__  # type: ignore[attr-defined]
    hints, fields = get_type_hints(typed), get_type_hints(RunOptions)
    assert all(hints[k] == fields[k] for k in hints)
    assert own - set(FIELDS) <= set(extra) | set(POSITIONAL.get(name, ["template"]))


def _call(name: str, **values: Any) -> None:
    fn = SURFACES[name][0]
    rows = (["a"],) if name == "map" else ()
    if name == "compare":
        values = {"models": ["test"], **values}
    if name in ("stream", "complete_incremental_async"):
        fn("Hi [[answer]]", *rows, **values).__anext__().send(None)  # the generator's first step reads the keywords
    elif name == "complete_async":
        fn("Hi [[answer]]", *rows, **values).send(None)
    else:
        fn("Hi [[answer]]", *rows, **values)


@pytest.mark.parametrize("name", list(SURFACES), ids=list(SURFACES))
def test_a_misspelt_keyword_is_one_sentence_naming_it_and_its_close_match(name: str) -> None:
    with pytest.raises(TypeError) as caught:
        _call(name, modle="test")
    short = name.rpartition(".")[2]
    # compare takes `models=` in the place of `model`; map takes both (one model, or one batch per model)
    close = {"compare": "'models'", "map": "'model' or 'models'"}.get(short, "'model'")
    assert str(caught.value) == f"{short}() got an unexpected keyword argument 'modle'; did you mean {close}?"
    takes = "context, tools, " if short == "compare" else "context, model, tools, "
    with pytest.raises(TypeError, match=rf"unexpected keyword argument 'zzz'; it takes {takes}"):
        _call(name, zzz=1)


@pytest.mark.parametrize(("name", "keyword", "why"), [
    ("show", "approve", "its widget's Approve / Deny buttons answer approvals"),
    ("map", "history", "each row is a run of its own"),
    ("map", "resume_from", "each row is a run of its own"),
])
def test_an_option_a_surface_leaves_out_says_why(name: str, keyword: str, why: str) -> None:
    with pytest.raises(TypeError) as caught:
        _call(name, **{keyword: None})
    assert str(caught.value) == f"{name}() got an unexpected keyword argument {keyword!r}: {why}"


def test_map_passes_every_keyword_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def capture(_template: Any, _rows: Any, options: RunOptions, *_: Any, **__: Any) -> Any:
        raise _Captured(options)

    monkeypatch.setattr(batch, "start_batch", capture)
    values = {name: value for name, value in _sentinels().items() if name not in SURFACES["map"][2]}
    with pytest.raises(_Captured) as caught:
        batch.map("Hi [[answer]]", ["a"], **values)
    assert caught.value.options == RunOptions(**values)


def test_the_struckdown_surfaces_build_the_model_from_their_own_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "start", _capture)
    with pytest.raises(_Captured) as caught:
        engine.complete("Hi [[answer]]", model=agentcell.LLM(model_name="test"), run_id="r1")
    assert caught.value.options == RunOptions(model="test", run_id="r1")


def test_mypy_rejects_a_misspelt_or_mistyped_keyword_and_accepts_the_options(tmp_path: Path) -> None:
    """What IDEs and mypy read is the `Unpack[...]` annotation, not the runtime signature: check it with mypy.

    Uses the repository's mypy cache (warm after `scripts/test`'s own mypy step)."""
    root = Path(__file__).resolve().parents[2]
    code = (
        "import agentcell\n"
        "agentcell.complete('Hi [[a]]', modle='test')\n"
        "agentcell.map('Hi {{ item }} [[a]]', ['x'], history=[])\n"
        "agentcell.stream('Hi [[a]]', approve_writes='yes')\n"
        "agentcell.show('Hi [[a]]', approve=None)\n"
        "agentcell.complete('Hi [[a]]', model='test', context={'a': 1}, journal=False, on_halt='return')\n"
        "agentcell.map('Hi {{ item }} [[a]]', ['x'], model='test', concurrency=2, approve=None, now=None)\n"
        "import agentcell.batch\n"  # `models=` gives the comparison's type, not one batch's
        "one: agentcell.batch.Batch = agentcell.map('Hi {{ item }} [[a]]', ['x'], models=['a', 'b'])\n"
    )
    snippet = tmp_path / "calls.py"
    snippet.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
                          str(snippet)], cwd=root, env=env, capture_output=True, text=True).stdout
    errors = [line.split(": error: ")[1] for line in out.splitlines() if ": error: " in line]
    assert errors == [
        'Unexpected keyword argument "modle" for "complete"; did you mean "model"?  [call-arg]',
        'Unexpected keyword argument "history" for overloaded function "map"  [call-overload]',  # `models=` or not
        'No overload variant of "map" matches argument types "str", "list[str]", "list[Never]"  [call-overload]',
        'Argument "approve_writes" to "stream" has incompatible type "str"; expected "bool"  [arg-type]',
        'Unexpected keyword argument "approve" for "show"  [call-arg]',
        'Incompatible types in assignment (expression has type "ComparedBatch", variable has type "Batch")  '
        '[assignment]',
    ]


@pytest.mark.parametrize(("code", "expected"), [
    ('agentcell.map("Hi [[a]]", [], compa', "compaction="),
    ('agentcell.complete("Hi [[a]]", resume_', "resume_from="),
    ('agentcell.stream("Hi [[a]]", approve_w', "approve_writes="),
], ids=["map", "complete", "stream"])
def test_the_notebooks_tab_completion_offers_the_options(code: str, expected: str) -> None:
    """IPython's keyword completion (what Jupyter's Tab asks the kernel) reads the runtime signature."""
    from IPython.core.completer import provisionalcompleter
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.user_ns["agentcell"] = agentcell
    with provisionalcompleter():
        offered = [c.text for c in shell.Completer.completions(code, len(code))]
    assert expected in offered


def test_help_shows_each_option_with_its_default() -> None:
    import pydoc

    text = pydoc.render_doc(agentcell.map, renderer=pydoc.plaintext)
    assert "compaction: 'Compaction | None' = Compaction(threshold=0.8" in text
    assert "approve_writes: 'bool' = False" in text and "**options" not in text
