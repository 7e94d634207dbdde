"""Fixtures for the template tests, and the hypothesis profiles the fuzz tests run under.

`HYPOTHESIS_PROFILE=ci` (the default) keeps the fuzz tests to about a minute on two cores;
`HYPOTHESIS_PROFILE=local` runs 20,000 examples per test (100k over the five in test_template_fuzz.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from agentcell.template import CompiledTemplate, RenderedSlot, SlotStep

settings.register_profile(
    "ci", max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("local", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

Run = Callable[..., dict[str, RenderedSlot]]


def run_template(
    template: CompiledTemplate, context: Mapping[str, Any] | None = None, answers: Mapping[str, Any] | None = None
) -> dict[str, RenderedSlot]:
    """Render every slot in order, as the engine does: each answer joins the context for later slots.

    An answer not given in `answers` is `"<name answer>"`.
    """
    values = dict(context or {})
    template.check_context(values)
    rendered: dict[str, RenderedSlot] = {}
    for step in template.steps:
        if isinstance(step, SlotStep):
            rendered[step.slot.name] = step.render(values)
            values[step.slot.name] = (answers or {}).get(step.slot.name, f"<{step.slot.name} answer>")
    return rendered


@pytest.fixture
def run() -> Run:
    """`run(template, context=None, answers=None) -> {slot name: RenderedSlot}`."""
    return run_template
