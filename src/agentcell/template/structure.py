"""The structured parts of a cell: `{% if %}`/`{% for %}` blocks that hold slots, and `<together>`.

A mixin of the compiler (`compiler.py` has the rest): text pending before a block, and text at the
end of a branch or loop body, becomes a `TextStep` (its turns join the prompt of the next slot the
run reaches); each branch and body is compiled into its own list of steps. Loop variables are not
context variables. Slots in exclusive branches may share a name; slots in one `<together>` block may
not read each other's answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import jinja2

from .jinja import CompiledExpr, CompiledText, compile_expression, locate_name
from .nodes import ForBlock, IfBlock, Node, Together
from .program import ForStep, IfBranch, IfStep, SlotSpec, SlotStep, Step, TextStep, TogetherStep
from .render import Condition, Items, TextRenderer, TurnSource
from .source import Source
from .template import VariableUse


class StructureCompiler:
    """The `{% if %}`, `{% for %}` and `<together>` half of the compiler."""

    source: Source
    env: jinja2.Environment
    steps: list[Step]
    specs: list[SlotSpec]
    segment_names: dict[str, SlotSpec]
    pending: list[TurnSource]
    uses: list[VariableUse]
    bound: list[frozenset[str]]
    within: list[str]

    def walk(self, nodes: tuple[Node, ...]) -> None:
        raise NotImplementedError

    def fail(self, message: str, line: int, col: int) -> NoReturn:
        raise NotImplementedError

    def use_text(self, text: CompiledText, position: int) -> None:
        raise NotImplementedError

    def use_expr(self, expr: CompiledExpr) -> None:
        raise NotImplementedError

    def refuse_inside(self, what: str, line: int, col: int) -> None:
        if self.within:
            where = {"if": "an {% if %}", "for": "a {% for %}", "together": "a <together>"}[self.within[-1]]
            self.fail(f"{what} cannot be inside {where} block that holds slots", line, col)

    def flush(self, line: int) -> None:
        """Turn the pending text into a `TextStep` (its turns join the next slot the run reaches)."""
        if self.pending:
            for source in self.pending:
                self.use_text(source.text, len(self.specs))
            renderer = TextRenderer(template_name=self.source.name, turns=tuple(self.pending))
            self.steps.append(TextStep(render=renderer, line=line))
            self.pending = []

    @contextmanager
    def block(self, kind: str, steps: list[Step]) -> Iterator[None]:
        outer, self.steps = self.steps, steps
        self.within.append(kind)
        try:
            yield
        finally:
            self.within.pop()
            self.steps = outer

    def add_if(self, node: IfBlock) -> None:
        self.refuse_in_together("{% if %}", node.line, node.col)
        self.flush(node.line)
        before, first = dict(self.segment_names), len(self.specs)
        names: dict[str, SlotSpec] = {}
        branches: list[IfBranch] = []
        for branch in node.branches:
            self.segment_names = dict(before)
            test = branch.test
            condition = None if test is None else self.condition(compile_expression(test, self.env, self.source))
            steps: list[Step] = []
            with self.block("if", steps):
                self.walk(branch.nodes)
                self.flush(branch.line)
            names.update(self.segment_names)
            arm = IfBranch(test=condition, steps=tuple(steps), line=branch.line, has_test=condition is not None)
            branches.append(arm)
        self.segment_names = {**before, **names}
        slots = tuple(dict.fromkeys(spec.name for spec in self.specs[first:]))
        self.steps.append(IfStep(branches=tuple(branches), slots=slots, line=node.line))

    def condition(self, expr: CompiledExpr) -> Condition:
        self.use_expr(expr)
        return Condition(self.source.name, expr)

    def add_for(self, node: ForBlock) -> None:
        self.refuse_in_together("{% for %}", node.line, node.col)
        self.flush(node.line)
        items = compile_expression(node.iterable, self.env, self.source)
        self.use_expr(items)
        self.bound.append(frozenset({*node.targets, "loop"}))
        test = None if node.test is None else compile_expression(node.test, self.env, self.source)
        if test is not None:
            self.use_expr(test)
        first = len(self.specs)
        steps: list[Step] = []
        with self.block("for", steps):
            self.walk(node.nodes)
            self.flush(node.line)
        self.bound.pop()
        slots = tuple(dict.fromkeys(spec.name for spec in self.specs[first:]))
        empty: list[Step] = []
        with self.block("for", empty):
            self.walk(node.empty)
            self.flush(node.line)
        renderer = Items(self.source.name, items, node.targets, test)
        self.steps.append(ForStep(targets=node.targets, items=renderer, steps=tuple(steps), empty=tuple(empty),
                                  slots=slots, line=node.line))  # fmt: skip

    def refuse_in_together(self, what: str, line: int, col: int) -> None:
        if "together" in self.within:
            self.fail(f"{what} with slots cannot be inside a <together> block", line, col)

    def add_together(self, node: Together) -> None:
        self.refuse_inside("<together>", node.line, node.col)
        self.flush(node.line)
        steps: list[Step] = []
        first_use = len(self.uses)
        first = len(self.specs)
        with self.block("together", steps):
            self.walk(node.nodes)
        members = [step for step in steps if isinstance(step, SlotStep)]
        if len(steps) != len(members):
            self.fail("a <together> block holds slots and text only", node.line, node.col)
        self.check_siblings(self.specs[first:], self.uses[first_use:], first)
        self.steps.append(TogetherStep(steps=tuple(members), line=node.line))

    def check_siblings(self, members: list[SlotSpec], uses: list[VariableUse], first: int) -> None:
        names = {spec.name: index for index, spec in enumerate(members, start=first)}
        for use in uses:
            for name in sorted(use.names & set(names)):
                if names[name] != use.slot or use.slot >= first + len(members):
                    source = Source(use.origin[1], name=use.origin[0]) if use.origin else self.source
                    line, col = locate_name(use.regions, name, self.env, source) or (use.line, use.col)
                    source.fail(
                        f"'{name}' is answered in the same <together> block, so it is not known yet here: "
                        "slots in a <together> block cannot read each other's answers",
                        line,
                        col,
                    )
