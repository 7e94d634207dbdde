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

import functools
import io
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jinja2
import jinja2.nodes
from jinja2 import meta
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..media.files import HELPERS
from ..media.marks import finalize
from .analysis import Analyzer, expression_names, simple_names
from .frozen import faster_init
from .nodes import Const, Dynamic, Expression, Text, TextPart
from .source import Source

_SINGLE_EXPR = re.compile(r"\{\{[^{}]*\}\}")
PLAIN_REGION = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
"""A `{{ name }}` region with nothing but a name in it (no filter, call, attribute or whitespace control)."""
_SPECIAL_NAMES = frozenset({"self", "loop", "super", "caller", "varargs", "kwargs"})
"""Names Jinja's generated code may bind itself instead of reading the context."""
_REGION = re.compile(r"\{\{.*?\}\}", re.DOTALL)


@functools.cache
def make_environment() -> jinja2.Environment:
    """The sandbox every cell renders in: no mutation of values, undefined names are errors.

    One per process: nothing changes it after it is made, and Jinja environments are made to be shared.
    Every `{{ }}` output passes through `media.marks.finalize` (a DataFrame becomes a Markdown table, a
    figure an image part in place); `image`, `document`, `audio` and `table` are its only globals."""
    env = ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols"],
        finalize=finalize,
    )
    env.globals.update(HELPERS)
    return env


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
    plain: list[Plain | None] = field(default_factory=list, repr=False)
    """Its pieces when it is plain (`plain_pieces`), found at its first render and kept; `None` when it is not."""

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
        if self.environment is None:
            text = self.literal or ""
            if check is not None:
                check(len(text))
            return text
        if not self.plain:
            self.plain.append(plain_pieces(self.node, self.environment))
        plain = self.plain[0]
        if plain is not None and plain.reads(context):
            return plain.render(context, self.environment.finalize, check)
        template = self.template
        assert template is not None
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


@dataclass(frozen=True, slots=True)
class Plain:
    """A text of literal pieces and `{{ name }}` regions only: rendered as Jinja renders it (each region is
    `str(finalize(value))`, the literal text with its line breaks normalized) without Jinja's machinery,
    which cost a batch row's one-line prompt ~17 µs of the ~20 its render took."""

    pieces: tuple[tuple[str, str | None], ...]
    """`(literal, None)` for a run of text, `("", name)` for a region, in order."""
    names: frozenset[str]

    def reads(self, context: Mapping[str, Any]) -> bool:
        """Whether `context` binds every name (else Jinja renders it, and says which one is undefined)."""
        return context.keys() >= self.names

    def render(self, context: Mapping[str, Any], finalize: Callable[[Any], Any] | None,
               check: Callable[[int], None] | None) -> str:
        out: list[str] = []
        for literal, name in self.pieces:
            if name is not None:
                value = context[name]
                literal = str(value if finalize is None else finalize(value))
            if check is not None:
                check(len(literal))
            out.append(literal)
        return "".join(out)


def plain_pieces(node: Text, env: jinja2.Environment) -> Plain | None:
    """`node` as a `Plain` when it is literal text and `{{ name }}` regions only, each name one Jinja reads
    from the context (not a global, not a name its generated code binds itself); else `None`."""
    pieces: list[tuple[str, str | None]] = []
    for part in node.parts:
        if part.kind == "data":
            pieces.append((_normalize_newlines(part.source), None))
            continue
        match = PLAIN_REGION.fullmatch(part.source) if part.kind == "variable" else None
        if match is None or match[1] in env.globals or match[1] in _SPECIAL_NAMES:
            return None
        pieces.append(("", match[1]))
    return Plain(tuple(pieces), frozenset(name for _, name in pieces if name is not None))


@dataclass(frozen=True, slots=True, eq=False)
class CompiledExpr:
    """A `{{ expr }}` option value (or an `{% if %}` test, a loop's items), checked, compiled at first use."""

    node: Dynamic
    make: Callable[[], Callable[..., Any]] = field(repr=False)
    """Builds the Python function that evaluates it (Jinja code generation is the costly part)."""
    variables: frozenset[str]
    quoted: bool = False
    """A quoted option with Jinja in it (`"light {{ colour }}"`): it renders to one string."""
    compiled: list[Callable[..., Any]] = field(default_factory=list, repr=False)

    @property
    def function(self) -> Callable[..., Any]:
        """The evaluating function (keyword arguments: the context)."""
        if not self.compiled:
            self.compiled.append(self.make())
        return self.compiled[0]


def compile_text(text: Text, env: jinja2.Environment, source: Source, analyzer: Analyzer) -> CompiledText:
    """Check `text`; raise `TemplateSyntaxError` located in the cell for any Jinja error."""
    for part in text.parts:
        if part.kind != "data" and part.kind != "comment":
            break
    else:
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
    """Check an option's `{{ expr }}`; raise `TemplateSyntaxError` at it for any Jinja error.

    The expression is parsed now and its names found by walking the tree (`analysis.expression_names`);
    when that cannot vouch for it (an unknown filter, a deep tree), it is compiled now, which raises
    the exact error. Otherwise its Python is generated at the first evaluation."""

    def make() -> Callable[..., Any]:
        return env.compile_expression(node.expression, undefined_to_none=False)

    simple = simple_names(node.source, env)
    if simple is not None:
        return CompiledExpr(node, make, simple)
    try:
        variables = expression_names(env.parse(node.source), env)
        if variables is None:
            variables = frozenset(meta.find_undeclared_variables(env.parse(node.source))) - set(env.globals)
            function = make()
            return CompiledExpr(node, make, variables, compiled=[function])
    except jinja2.TemplateSyntaxError as exc:
        source.fail(f"invalid Jinja: {exc.message}", node.line, node.col)
    except (RecursionError, SyntaxError, MemoryError):
        source.fail("Jinja here is nested too deeply to compile", node.line, node.col)
    return CompiledExpr(node, make, variables)


def compile_quoted(value: Const, env: jinja2.Environment, source: Source) -> CompiledExpr:
    """A quoted option value with Jinja in it: exactly one `{{ expr }}` gives that value (a list stays
    a list); anything else renders to a string. Neither is ever parsed as markup."""
    node = Dynamic(value.text, value.line, value.col, value.pos)
    if _SINGLE_EXPR.fullmatch(value.text):
        return compile_expr(node, env, source)
    regions = _REGION.findall(value.text)
    names = [simple_names(region, env) for region in regions]
    whole = value.text.count("{{") == len(regions) and "{%" not in value.text and "{#" not in value.text
    if whole and all(found is not None for found in names):
        variables = frozenset().union(*(found for found in names if found is not None))
        template: list[jinja2.Template] = []
    else:
        try:
            compiled, variables = _compile_tree(env.parse(value.text), env)
        except jinja2.TemplateSyntaxError as exc:
            source.fail(f"invalid Jinja in a quoted option: {exc.message}", value.line, value.col)
        except (RecursionError, SyntaxError, MemoryError):
            source.fail("Jinja here is nested too deeply to compile", value.line, value.col)
        template = [compiled]

    def make() -> Callable[..., Any]:
        if not template:
            template.append(_compile_tree(env.parse(value.text), env)[0])

        def render(**values: Any) -> str:
            return template[0].render(values)

        return render

    return CompiledExpr(node, make, variables, quoted=True)


def compile_expression(expression: Expression, env: jinja2.Environment, source: Source) -> CompiledExpr:
    """An `{% if %}` test or a loop's items, as an option value would be (`{{ expression }}`)."""
    # Two characters of `{{` before the expression's own offset keep names where the cell has them.
    node = Dynamic("{{" + expression.source + "}}", expression.line, expression.col, expression.pos - 2)
    return compile_expr(node, env, source)


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


faster_init(CompiledText, CompiledExpr)
