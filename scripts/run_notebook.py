"""Execute a notebook top to bottom with nbclient and print what its cells produced.

Used by `scripts/quickstart` (the main job). Exits non-zero if any cell raised or printed an error
output. The first line printed is the verdict (every cell ran, or which did not); the cells' printed
output follows. The executed copy is written next to the input as `<name>.executed.ipynb`
(git-ignored): the notebook in the repository is never written.

The kernel's own log is kept to errors: ipykernel >= 7.4 warns on every start that its local TCP ports
are unencrypted, which says nothing about this notebook (nbclient starts the kernel on 127.0.0.1 for
this one run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

KERNEL_ARGS = ["--IPKernelApp.log_level=ERROR"]
"""The kernel's log: errors only (its warnings are about the kernel, not the notebook)."""


def main(path: str) -> int:
    src = Path(path)
    nb = nbformat.read(src, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", extra_arguments=KERNEL_ARGS,
                            resources={"metadata": {"path": str(src.parent)}})
    client.execute()
    out = src.with_suffix(".executed.ipynb")
    nbformat.write(nb, out)
    errors, printed = [], []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                errors.append(f"cell {i}: {output['ename']}: {output['evalue']}")
            elif output.get("output_type") == "stream":
                printed.append(output.get("text", ""))
    code_cells = sum(cell.cell_type == "code" for cell in nb.cells)
    if errors:
        print(f"FAILED: {len(errors)} of {code_cells} code cells of {src} raised an error:", file=sys.stderr)
        for line in errors:
            print(f"  {line}", file=sys.stderr)
    else:
        print(f"OK: all {code_cells} code cells of {src} ran without an error; executed copy: {out}")
    print("".join(printed), end="")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
