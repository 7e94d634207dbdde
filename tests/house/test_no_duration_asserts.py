"""No test asserts a duration (issue 18; the house rule): speed lives in `bench/` and BENCHMARKS.md.

A bound on wall time fails on a loaded machine and passes a slow regression on a fast one, so a
test proves a behaviour by its cause instead (a stop ends the run `stopped` and the sleep it
interrupted never finished; a pacing uses the recorded delays; a throttle sends from its timer).
This guard keeps the rule true. It reads every Python file under `tests/` with `ast` and follows
values that come from a clock — `time.monotonic()`, `time.perf_counter()`, `time.time()` (and their
`_ns` forms), `time.process_time()`, an event loop's `loop.time()` — through assignments,
arithmetic, `min`/`max`/`sum`, loops and comprehensions, into attributes set from them (e.g. a
recorded request's `received_at`), and into what a helper returns when it returns a clock reading
(e.g. `KernelSession.wait_until`). An `assert` that orders such a value (`<`, `<=`, `>`, `>=`) is
reported. Waiting with a deadline is not asserting: a `while time.monotonic() < deadline` loop, a
`wait_for(..., 60)` or a `TimeoutError` raised by a helper is a hang guard and stays allowed.

JavaScript tests (`js/tests/`, helpers included) drive time through injected or fake clocks; reading the
browser's real clock there (`Date.now()`, `performance.now()`) is reported too.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[2]
TESTS = ROOT / "tests"
CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns", "process_time",
          "process_time_ns", "thread_time", "thread_time_ns"}
PASS_THROUGH = {"max", "min", "sum", "abs", "round", "float", "int", "sorted"}
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
RELEVANT = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr,
            ast.Return, ast.Call, ast.Assert)


def _is_clock_call(node: ast.AST) -> bool:
    """`time.monotonic()`, `perf_counter()`, `loop.time()`, `asyncio.get_running_loop().time()`, …"""
    if not isinstance(node, ast.Call) or node.args or node.keywords:
        return False
    func = node.func
    if isinstance(func, ast.Name):
        return func.id in CLOCKS - {"time"}  # `from time import monotonic`; a bare `time()` is ambiguous
    return isinstance(func, ast.Attribute) and func.attr in CLOCKS


class _Taint:
    """Which names, attributes and helper functions carry a clock reading, across the whole suite."""

    def __init__(self, trees: dict[Path, ast.Module]) -> None:
        self.attrs: set[str] = set()
        self.helpers: set[str] = set()
        self.names: dict[ast.AST, set[str]] = {}
        self.scopes: dict[int, list[ast.AST]] = {}
        """The scopes (module, functions) of each tree, by the tree's id."""
        self.nodes: dict[ast.AST, list[ast.AST]] = {}
        """The nodes of each scope that can move a clock reading or assert on one, in source order."""
        for tree in trees.values():
            self.scopes[id(tree)] = [tree, *(n for n in ast.walk(tree)
                                             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]
            for scope in self.scopes[id(tree)]:
                self.nodes[scope] = [n for n in _own_nodes(scope) if isinstance(n, RELEVANT)]
        # Attributes and helpers are found across files (a fixture server records `received_at`, a
        # client returns the time it saw something); iterate until nothing new turns up.
        for _ in range(4):
            before = (len(self.attrs), len(self.helpers))
            for tree in trees.values():
                self._scan_scopes(tree)
            if (len(self.attrs), len(self.helpers)) == before:
                break

    def _scan_scopes(self, tree: ast.Module) -> None:
        for scope in self.scopes[id(tree)]:
            names = self.names.setdefault(scope, set())
            for _ in range(3):  # a later assignment may feed an earlier loop's names
                for node in self.nodes[scope]:
                    self._visit(node, names, scope)

    def _visit(self, node: ast.AST, names: set[str], scope: ast.AST) -> None:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if self.tainted(node.value, names):
                for target in targets:
                    self._mark(target, names)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension | ast.NamedExpr):
            source = node.value if isinstance(node, ast.NamedExpr) else node.iter
            if self.tainted(source, names):
                self._mark(node.target, names)
        elif isinstance(node, ast.Return) and node.value is not None and self.tainted(node.value, names):
            if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                self.helpers.add(scope.name)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("append", "add", "extend") and isinstance(node.func.value, ast.Attribute)
              and any(self.tainted(a, names) for a in node.args)):
            self.attrs.add(node.func.value.attr)  # e.g. `comm.updates.append((now, state))`

    def _mark(self, target: ast.AST, names: set[str]) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and node is target:
                self.attrs.add(node.attr)

    def tainted(self, node: ast.AST, names: set[str]) -> bool:
        """Whether the value of `node` is (derived from) a clock reading."""
        if _is_clock_call(node):
            return True
        match node:
            case ast.Name(id=name):
                return name in names
            case ast.Attribute(attr=attr):
                return attr in self.attrs
            case ast.Call(func=ast.Name(id=name), args=args) if name in PASS_THROUGH:
                return any(self.tainted(a, names) for a in args)
            case ast.Call(func=ast.Name(id=name) | ast.Attribute(attr=name)):
                return name in self.helpers
            case ast.BinOp(left=left, right=right):
                return self.tainted(left, names) or self.tainted(right, names)
            case ast.UnaryOp(operand=operand):
                return self.tainted(operand, names)
            case ast.BoolOp(values=values) | ast.Tuple(elts=values) | ast.List(elts=values):
                return any(self.tainted(v, names) for v in values)
            case ast.IfExp(body=body, orelse=orelse):
                return self.tainted(body, names) or self.tainted(orelse, names)
            case ast.Subscript(value=value):
                return self.tainted(value, names)
            case ast.GeneratorExp() | ast.ListComp() | ast.SetComp():
                local = names | {n.id for g in node.generators if self.tainted(g.iter, names)
                                 for n in ast.walk(g.target) if isinstance(n, ast.Name)}
                return self.tainted(node.elt, local)
        return False


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` in source order, not descending into nested functions or classes."""
    stack = list(reversed(list(ast.iter_child_nodes(scope))))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _python_tests() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), filename=str(p)) for p in sorted(TESTS.rglob("*.py"))}


def duration_asserts(trees: dict[Path, ast.Module]) -> list[str]:
    """`path:line: source` of every assert that orders a clock-derived value."""
    taint = _Taint(trees)
    found = []
    for path, tree in trees.items():
        lines = path.read_text().splitlines() if path.exists() else []
        for line in _duration_assert_lines(tree, taint):
            found.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {lines[line - 1].strip() if lines else ''}")
    return found


def _duration_assert_lines(tree: ast.Module, taint: _Taint) -> list[int]:
    found: set[int] = set()
    for scope in taint.scopes[id(tree)]:
        names = taint.names[scope]
        for node in taint.nodes[scope]:
            if not isinstance(node, ast.Assert):
                continue
            local = _comprehension_names(node.test, names, taint)
            for compare in (c for c in ast.walk(node.test) if isinstance(c, ast.Compare)):
                if any(isinstance(op, ORDERING) for op in compare.ops) and any(
                        taint.tainted(o, local) for o in [compare.left, *compare.comparators]):
                    found.add(node.lineno)
    return sorted(found)


def _comprehension_names(test: ast.AST, names: set[str], taint: _Taint) -> set[str]:
    local = set(names)
    for comp in (n for n in ast.walk(test) if isinstance(n, ast.comprehension)):
        if taint.tainted(comp.iter, local):
            local |= {n.id for n in ast.walk(comp.target) if isinstance(n, ast.Name)}
    return local


JS_CLOCK = re.compile(r"\b(Date\.now|performance\.now|process\.hrtime)\s*\(")


def test_no_python_test_asserts_a_duration() -> None:
    found = duration_asserts(_python_tests())
    assert found == [], "tests assert durations (prove the cause instead; speed belongs in bench/):\n" + \
        "\n".join(found)


def test_no_js_test_reads_the_real_clock() -> None:
    tests = sorted((ROOT / "js" / "tests").rglob("*.js"))
    assert len(tests) > 10
    found = [f"{p.relative_to(ROOT).as_posix()}:{i}: {line.strip()}" for p in tests
             for i, line in enumerate(p.read_text().splitlines(), 1) if JS_CLOCK.search(line)]
    assert found == [], "JS tests read the real clock (inject a clock instead):\n" + "\n".join(found)


# ---- the guard itself can fail ------------------------------------------------------------------

def _scan(source: str, *helpers: str) -> list[int]:
    probe = ast.parse(source)
    trees = {TESTS / "_probe.py": probe, **{TESTS / f"_helper{i}.py": ast.parse(h) for i, h in enumerate(helpers)}}
    return _duration_assert_lines(probe, _Taint(trees))


def test_the_guard_finds_the_shapes_it_exists_for() -> None:
    source = '''
import time
def a():
    started = time.monotonic()
    work()
    assert time.monotonic() - started < 2
def b(loop):
    t0 = loop.time()
    elapsed = (loop.time() - t0) * 1000
    assert elapsed < 50, "too slow"
def c(kernel):
    sent = kernel.send_custom()
    stopped = kernel.wait_until(lambda: True)
    assert stopped - sent < 2.0
def d(server):
    late = [r for r in server.requests if r.received_at > 0]
    assert max(t for t, _ in server.updates) <= 3
'''
    helper = '''
import time
class Session:
    def wait_until(self, predicate):
        return time.monotonic()
    def send_custom(self):
        now = time.monotonic()
        return now
class Recorder:
    def on(self, rec):
        rec.received_at = time.monotonic()
        self.server.updates.append((time.monotonic(), rec))
'''
    assert _scan(source, helper) == [6, 10, 14, 17]


def test_the_guard_leaves_waits_counts_and_orders_of_events_alone() -> None:
    source = '''
import time
def a(kernel, items):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pass
    assert len(items) <= 30
    assert items.index("a") < items.index("b")
    assert request.disconnected_at is not None
    t = time.monotonic()
    assert f"{t}" != ""
'''
    assert _scan(source) == []
