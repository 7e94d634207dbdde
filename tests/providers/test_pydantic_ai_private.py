"""Every private pydantic-ai name agentcell touches, pinned: a release that moves one fails here, by name.

The declared range (`pydantic-ai-slim>=2.68,<3`, docs/pydantic-ai.md) is tested at both ends: CI runs the
fast tier on the floor and everything on the newest release. Private names are where a minor release
breaks a package without a changelog line, so each is checked here rather than discovered as a run
that ends `failed` somewhere else:

* the cassette's replayed stream (`providers/cassette.py`) is a `StreamedResponse` subclass: it implements
  `_get_event_iterator` (pydantic-ai's documented hook for custom models), feeds the response's
  `_parts_manager` (`handle_text_delta`, `handle_thinking_delta`, `handle_tool_call_delta_events`,
  `handle_part`) and reports the recorded usage through `_add_usage`;
* the slot model (`engine/slotmodel.py`) imports `_genai_prices.fill_response_cost` and
  `models._continuation.merge_responses`; it degrades without them (tests/engine/test_private_names.py),
  and this file says when that degraded path is the one in use.
"""

from __future__ import annotations

import importlib
import inspect

import pytest
from pydantic_ai._parts_manager import ModelResponsePartsManager
from pydantic_ai.models import StreamedResponse


def _params(fn: object) -> set[str]:
    return set(inspect.signature(fn).parameters)  # type: ignore[arg-type]


def test_the_streamed_response_hooks_the_cassette_uses_exist() -> None:
    assert inspect.isfunction(StreamedResponse._get_event_iterator), "StreamedResponse._get_event_iterator moved"
    assert "_parts_manager" in dir(StreamedResponse), "StreamedResponse._parts_manager moved"
    assert {"usage", "reported", "cumulative"} <= _params(StreamedResponse._add_usage), \
        "StreamedResponse._add_usage(usage, *, reported, cumulative) changed"


@pytest.mark.parametrize(("method", "keywords"), [
    ("handle_text_delta", {"vendor_part_id", "content"}),
    ("handle_thinking_delta", {"vendor_part_id", "content", "id", "provider_name", "signature"}),
    ("handle_tool_call_delta_events", {"vendor_part_id", "tool_name", "args", "tool_call_id"}),
    ("handle_part", {"vendor_part_id", "part"}),
])
def test_the_parts_manager_methods_the_cassette_calls_exist(method: str, keywords: set[str]) -> None:
    found = getattr(ModelResponsePartsManager, method, None)
    assert found is not None, f"pydantic_ai._parts_manager.ModelResponsePartsManager.{method} is gone"
    assert keywords <= _params(found), f"ModelResponsePartsManager.{method} no longer takes {keywords - _params(found)}"


@pytest.mark.parametrize(("module", "name"), [
    ("pydantic_ai._genai_prices", "fill_response_cost"),
    ("pydantic_ai.models._continuation", "merge_responses"),
])
def test_the_slot_models_private_helpers_exist(module: str, name: str) -> None:
    """Not fatal to a run (the slot model falls back), but a request's cost or a suspended response's
    join would quietly be lost: said here first."""
    assert callable(getattr(importlib.import_module(module), name, None)), f"{module}.{name} moved"
    from agentcell.engine import slotmodel

    assert getattr(slotmodel, name).__module__ == module, f"agentcell uses its fallback for {module}.{name}"
