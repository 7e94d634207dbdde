"""Execute a notebook top to bottom with nbclient and print what its cells produced.

Used by `scripts/quickstart` (the main job) and by the notebook tests. Exits non-zero if any cell
raised or printed an error output. The executed copy is written next to the input as
`<name>.executed.ipynb` (git-ignored).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(path: str) -> int:
    src = Path(path)
    nb = nbformat.read(src, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
    out = src.with_suffix(".executed.ipynb")
    nbformat.write(nb, out)
    failed = False
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                failed = True
                print(f"cell {i}: {output['ename']}: {output['evalue']}", file=sys.stderr)
            elif output.get("output_type") == "stream":
                print(output.get("text", ""), end="")
    print(f"\nexecuted {len(nb.cells)} cells -> {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
