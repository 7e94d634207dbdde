"""Every surface that takes run options as keywords lists exactly `RunOptions`' fields and passes them on."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

import agentcell
from agentcell import engine
from agentcell.engine import setup
from agentcell.frontends import show as handle
from agentcell.options import RunOptions
from agentcell.template import compile_template

FIELDS = [f.name for f in dataclasses.fields(RunOptions)]

# Surface → (keywords it adds after the options, options it leaves out and why). The struckdown-named
# functions add struckdown's front-only keywords: `credentials` (folded into `model` before `RunOptions`
# is built, so no key is held by the options), and for the generator `stream` (token events or not).
SURFACES: dict[str, tuple[Callable[..., Any], list[str], set[str]]] = {
    "start_run": (engine.start_run, [], set()),
    "stream": (engine.stream, [], set()),
    "complete_async": (engine.complete_async, ["on_halt", "credentials"], set()),
    "complete": (engine.complete, ["on_halt", "credentials"], set()),
    "complete_incremental_async": (engine.complete_incremental_async, ["on_halt", "credentials", "stream"], set()),
    # The widget's Approve / Deny buttons answer approvals; `key` (which earlier run this one replaces) is the front's.
    "show": (handle.show, ["key"], {"approve"}),
}


@pytest.mark.parametrize("name", list(SURFACES), ids=list(SURFACES))
def test_keywords_are_the_run_options_in_order_with_their_defaults(name: str) -> None:
    fn, extra, left_out = SURFACES[name]
    params = list(inspect.signature(fn).parameters.values())
    assert params[0].name == "template" and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    keywords = params[1:]
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


@pytest.mark.parametrize("name", ["start_run", "stream", "complete_async", "complete", "complete_incremental_async"])
def test_engine_surfaces_pass_every_keyword_on(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "start", _capture)
    monkeypatch.setattr(setup, "start", _capture)
    values = _sentinels()
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


def test_run_options_is_public() -> None:
    assert agentcell.RunOptions is RunOptions
