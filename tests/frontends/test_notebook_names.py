"""No notebook defines a name of agentcell's public API: a reader who later writes `show(...)` gets agentcell's.

The workshop once defined its own `show(result)` printer, so `show` meant two things in one class.
Reads the notebooks' code as IPython runs it (magics translated), without executing anything.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

import agentcell

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


class _Globals(ast.NodeVisitor):
    """The names a cell binds in the notebook's namespace: not a function's locals or a comprehension's."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.names.add(node.name)  # its body is another scope

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.names.add(node.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_ListComp(self, node: ast.ListComp) -> None:
        pass

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.names.add(node.id)


def _defined(source: str) -> set[str]:
    """Names a cell binds by `def`, `class` or assignment (imports bind agentcell's own objects: allowed)."""
    visitor = _Globals()
    visitor.visit(ast.parse(TransformerManager().transform_cell(source)))
    return visitor.names


@pytest.mark.parametrize("path", sorted(p for p in NOTEBOOKS.glob("*.ipynb") if ".executed." not in p.name),
                         ids=lambda p: p.name)
def test_no_notebook_shadows_a_public_name(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    shadowed = {
        (index, name)
        for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
        for name in _defined(cell.source) & set(agentcell.__all__)
    }
    assert shadowed == set(), f"{path.name} redefines agentcell's {sorted(n for _, n in shadowed)}"
