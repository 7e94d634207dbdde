"""Jinja, confined to text and option values: compile them, find their free variables, map errors back.

Each `Text` node is its own small Jinja template and each `{{ expr }}` option value its own
expression, checked when the cell compiles (so every Jinja syntax error is found before a model is
called) and rendered only when their slot is reached. Jinja never sees a slot or a tag, and what it
renders is a value that nothing parses again.

A text is checked the cheap way (`analysis`) when that is exact, else the full way (parse,
generate and compile its Python, as rendering needs). Its Python is compiled once, at the first
render, unless the full way already did.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jinja2
import jinja2.nodes
from jinja2 import meta
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .analysis import Analyzer
from .nodes import Dynamic, Text, TextPart
from .source import Source


def make_environment() -> jinja2.Environment:
    """The sandbox every cell renders in: no mutation of values, undefined names are errors."""
    return ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols"],
    )


@dataclass(frozen=True, slots=True, eq=False)
class CompiledText:
    """A `Text` node ready to render: a literal string, or a compiled Jinja template."""

    node: Text
    literal: str | None
    """The text itself when it holds no Jinja (rendered without Jinja at all)."""
    environment: jinja2.Environment | None = field(default=None, repr=False)
    """What renders it; `None` for a literal."""
    variables: frozenset[str] = frozenset()
    """Names it reads that it does not set itself."""
    assigned: frozenset[str] = frozenset()
    """Names its `{% set %}`s assign (they last only until the end of this text)."""
    compiled: list[jinja2.Template] = field(default_factory=list, repr=False)
    """Its compiled template once there is one (compiled at the first render, then kept)."""

    @property
    def template(self) -> jinja2.Template | None:
        """The compiled Jinja template (`None` for a literal), compiled on first use."""
        if self.environment is None:
            return None
        if not self.compiled:
            self.compiled.append(_compile_tree(self.environment.parse(self.node.source), self.environment)[0])
        return self.compiled[0]

    def render(self, context: Mapping[str, Any], *, check: Callable[[int], None] | None = None) -> str:
        """The text for `context`; Jinja's exceptions propagate (the renderer locates them).

        `check(size)` is called with each piece's length as Jinja produces it, so a render can be
        bounded or stopped between pieces (it raises to stop).
        """
        template = self.template
        if template is None:
            text = self.literal or ""
            if check is not None:
                check(len(text))
            return text
        if check is None:
            return template.render(context)
        pieces: list[str] = []
        for piece in template.generate(context):
            check(len(piece))
            pieces.append(piece)
        return "".join(pieces)

    @property
    def has_content(self) -> bool:
        """Whether rendering it can produce something other than whitespace (blocks and comments can't)."""
        return any(
            part.kind in ("variable", "raw") or (part.kind == "data" and part.source.strip())
            for part in self.node.parts
        )


@dataclass(frozen=True, slots=True, eq=False)
class CompiledExpr:
    """A `{{ expr }}` option value ready to evaluate."""

    node: Dynamic
    function: Callable[..., Any] = field(repr=False)
    variables: frozenset[str]


def compile_text(text: Text, env: jinja2.Environment, source: Source, analyzer: Analyzer) -> CompiledText:
    """Check `text`; raise `TemplateSyntaxError` located in the cell for any Jinja error."""
    if all(part.kind in ("data", "comment") for part in text.parts):
        literal = "".join(part.source for part in text.parts if part.kind == "data")
        return CompiledText(text, _normalize_newlines(literal))
    variables = analyzer.variables(text)
    if variables is not None:
        return CompiledText(text, None, env, variables)
    try:
        tree = env.parse(text.source)
        template, variables = _compile_tree(tree, env)
    except jinja2.TemplateSyntaxError as exc:
        line, col = _locate_line(text, exc.lineno, env)
        source.fail(f"invalid Jinja: {exc.message}", line, col)
    except (RecursionError, SyntaxError, MemoryError):
        # SyntaxError: Python's own limits on the generated code ("too many statically nested blocks").
        first = next(part for part in text.parts if part.kind not in ("data", "comment"))
        source.fail("Jinja here is nested too deeply to compile", first.line, first.col)
    setting = any(part.kind == "block" and "set" in part.source for part in text.parts)
    return CompiledText(text, None, env, variables, _assigned(tree) if setting else frozenset(), [template])


def _assigned(tree: jinja2.nodes.Template) -> frozenset[str]:
    """The names `{% set %}` statements in `tree` assign (only a block with "set" in it can)."""
    names: set[str] = set()
    for node in tree.find_all((jinja2.nodes.Assign, jinja2.nodes.AssignBlock)):
        if isinstance(node, jinja2.nodes.Assign | jinja2.nodes.AssignBlock):
            targets = [node.target, *node.target.find_all(jinja2.nodes.Name)]
            names.update(target.name for target in targets if isinstance(target, jinja2.nodes.Name))
    return frozenset(names)


def compile_expr(node: Dynamic, env: jinja2.Environment, source: Source) -> CompiledExpr:
    """Compile an option's `{{ expr }}`; raise `TemplateSyntaxError` at it for any Jinja error."""
    try:
        variables = frozenset(meta.find_undeclared_variables(env.parse(node.source))) - set(env.globals)
        function = env.compile_expression(node.expression, undefined_to_none=False)
    except jinja2.TemplateSyntaxError as exc:
        source.fail(f"invalid Jinja: {exc.message}", node.line, node.col)
    except (RecursionError, SyntaxError, MemoryError):
        source.fail("Jinja here is nested too deeply to compile", node.line, node.col)
    return CompiledExpr(node, function, variables)


class _RecordingCodeGenerator(CodeGenerator):
    """Jinja's code generator, also noting the names the template reads from its context.

    That is what `jinja2.meta.find_undeclared_variables` computes (with the same `enter_frame`
    hook), but it needs a second generation pass; this does both in one.
    """

    def __init__(self, environment: jinja2.Environment, stream: io.StringIO) -> None:
        super().__init__(environment, "<cell>", None, stream, False, environment.optimized)
        self.undeclared: set[str] = set()

    def enter_frame(self, frame: Frame) -> None:
        super().enter_frame(frame)
        for action, param in frame.symbols.loads.values():
            if action == "resolve" and param not in self.environment.globals:
                self.undeclared.add(param)


def _compile_tree(tree: jinja2.nodes.Template, env: jinja2.Environment) -> tuple[jinja2.Template, frozenset[str]]:
    stream = io.StringIO()
    generator = _RecordingCodeGenerator(env, stream)
    generator.visit(tree)
    code = compile(stream.getvalue(), "<template>", "exec")
    template = env.template_class.from_code(env, code, env.make_globals(None))
    return template, frozenset(generator.undeclared)


def locate_name(
    regions: Iterable[tuple[str, int]], name: str, env: jinja2.Environment, source: Source
) -> tuple[int, int] | None:
    """Where `name` is first read among Jinja `regions` (`(source, offset)` pairs), or `None`."""
    for region, offset in regions:
        if not region.startswith(("{{", "{%")):
            continue
        position, after_dot = offset, False
        try:
            for _, kind, value in env.lex(region):
                if kind == "name" and value == name and not after_dot:
                    return source.position(position)
                if kind != "whitespace":
                    after_dot = kind == "operator" and value == "."
                position += len(value)
        except jinja2.TemplateSyntaxError:
            continue
    return None


def _locate_line(text: Text, lineno: int, env: jinja2.Environment) -> tuple[int, int]:
    """The cell position of line `lineno` of `text`'s Jinja source: the Jinja region Jinja blamed."""
    covering: list[tuple[TextPart, int]] = []
    first_line = 1
    for part in text.parts:
        last_line = first_line + _count_newlines(part.source)
        if first_line <= lineno <= last_line:
            covering.append((part, first_line))
        first_line = last_line
    if not covering:
        return text.line, text.col
    starting = [part for part, start in covering if start == lineno and part.kind in ("variable", "block")]
    for part in starting:
        if part.kind == "variable" and not _parses(part.source, env):
            return part.line, part.col
    if starting:
        return starting[0].line, starting[0].col
    part, start = covering[0]
    if start == lineno:
        return part.line, part.col
    return part.line + (lineno - start), 1


def _parses(region: str, env: jinja2.Environment) -> bool:
    try:
        env.parse(region)
    except (jinja2.TemplateSyntaxError, RecursionError):
        return False
    return True


def _count_newlines(text: str) -> int:
    """Line breaks as Jinja counts them (`\\r\\n`, `\\r` or `\\n`)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def _normalize_newlines(text: str) -> str:
    """Line breaks as Jinja renders them, so literal and Jinja texts agree."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
