"""The code keeps the shape the style guide asks for: small modules, short functions (tests exempt).

Module: at most 400 lines (Python under src/, JavaScript under js/src/). Function: at most 60 lines
(Python, measured by `ast`; JavaScript functions are checked by `js/tests/structure.test.js`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
MAX_MODULE, MAX_FUNCTION = 400, 60


def _python_modules() -> list[Path]:
    return sorted((ROOT / "src" / "agentcell").rglob("*.py"))


def _js_modules() -> list[Path]:
    return sorted((ROOT / "js" / "src").rglob("*.js"))


def test_no_module_over_400_lines() -> None:
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in _python_modules() + _js_modules()}
    assert len(sizes) > 20
    assert {name: n for name, n in sizes.items() if n > MAX_MODULE} == {}


def test_no_python_function_over_60_lines() -> None:
    long: dict[str, int] = {}
    for path in _python_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > MAX_FUNCTION:
                    long[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = n
    assert long == {}


def test_js_folder_holds_sources_and_tests_apart() -> None:
    """`js/` is the widget's sources (`js/src/`, what the bundle is built from) and its tests (`js/tests/`),
    plus the build script and its README: nothing else at the top, and no test among the sources."""
    js = ROOT / "js"
    assert sorted(p.name for p in js.iterdir()) == ["README.md", "build.mjs", "src", "tests"]
    assert [p.relative_to(ROOT).as_posix() for p in (js / "src").rglob("*.test.js")] == []
    assert len(list((js / "tests").glob("*.test.js"))) > 10
