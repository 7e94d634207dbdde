"""`frozen.faster_init` keeps every dataclass promise: signature, defaults, factories, frozenness."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from agentcell.template.frozen import faster_init
from agentcell.template.jinja import CompiledText
from agentcell.template.nodes import Text, TextPart
from agentcell.template.program import SlotSpec


def _twins() -> tuple[type, type]:
    def make() -> type:
        @dataclasses.dataclass(frozen=True, slots=True)
        class Point:
            x: int
            label: str = "p"
            tags: list[str] = dataclasses.field(default_factory=list)
            _: dataclasses.KW_ONLY
            weight: float = 1.0

        return Point

    plain, fast = make(), make()
    faster_init(fast)
    return plain, fast


def test_the_signature_defaults_and_factories_are_the_dataclass_ones() -> None:
    plain, fast = _twins()
    assert fast.__init__ is not plain.__init__
    assert inspect.signature(fast) == inspect.signature(plain)
    a, b = fast(1), fast(1)
    assert (a.x, a.label, a.tags, a.weight) == (1, "p", [], 1.0)
    assert a.tags is not b.tags  # a fresh list each time, as default_factory promises
    assert fast(2, "q", ["t"], weight=3.0) == fast(x=2, label="q", tags=["t"], weight=3.0)
    with pytest.raises(TypeError):
        fast(1, "q", [], 3.0)  # weight is keyword-only
    with pytest.raises(TypeError):
        fast()


def test_instances_stay_frozen_hashable_and_replaceable() -> None:
    part = TextPart("data", "hi", 1, 1, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.source = "changed"  # type: ignore[misc]
    assert part == TextPart("data", "hi", 1, 1, 0) and hash(part) == hash(TextPart("data", "hi", 1, 1, 0))
    assert dataclasses.replace(part, source="ho").source == "ho"
    spec = SlotSpec(name="a", type="text", line=1, col=1)
    assert (spec.required, spec.quantifier, spec.occurrence) == (False, None, 1)
    text = CompiledText(Text((part,), 1, 1), "hi")
    assert text.compiled == [] and text.compiled is not CompiledText(text.node, "hi").compiled


def test_a_class_with_post_init_keeps_its_own_init() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("negative")

    before = Checked.__init__
    faster_init(Checked)
    assert Checked.__init__ is before
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)
