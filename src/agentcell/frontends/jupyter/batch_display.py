"""A batch as a cell's last expression: `batch = agentcell.map(...)`, then `batch` (or `agentcell.compare(...,
over=rows)` as the last line) shows the live view `%%agent --over` shows, not a one-line repr.

`map` and `compare` return at once while the rows run on the kernel's loop, and IPython shows a cell's value through
its display formatters. The batch layer knows no front end (the layers' contract), so the views are registered here
with IPython by the types' dotted names (`for_type_by_name`: no batch module is imported until a batch is shown):

* a `Batch` gets a `BatchWidget` (progress, the rows live, "Retry failed rows", one row's run on a click);
* a `ComparedBatch` gets the models' table (`ModelsWidget`: pass rate, cost, latency per model and each row's answer
  per model) above each model's batch widget; a retry in one model's widget updates the table.

Each view comes with its static twin, a plain output updated in place when the batch ends (and at each cell boundary,
`saved_outputs.py`), whose `text/plain` starts with a one-line summary ("agentcell batch: 30 rows (30 completed);
completed; 20/30 passed (66.7%); 10 failed ..."): what a headless runner (nbclient, papermill, nbconvert) saves,
and what a notebook opened without a kernel shows.

`register(shell)` runs at `%load_ext agentcell` and at `import agentcell` (`register_in_kernel`), so the Python API
needs no magic. Only a kernel's shell is registered: a terminal IPython renders no widget, and there the repr says
what the batch is.
"""

from __future__ import annotations

import functools
import html
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...batch import Batch, ComparedBatch

BATCH = ("agentcell.batch.runner", "Batch")
COMPARED = ("agentcell.batch.compare_rows", "ComparedBatch")
"""The types shown, by module and name (what IPython's `for_type_by_name` takes)."""


def register(shell: Any) -> None:
    """Show `Batch` and `ComparedBatch` values in `shell` with their live views, if it is a kernel's (idempotent)."""
    if getattr(shell, "kernel", None) is None:
        return
    formatter = shell.display_formatter.ipython_display_formatter
    formatter.for_type_by_name(*BATCH, show_batch)
    formatter.for_type_by_name(*COMPARED, show_compared)


def register_in_kernel() -> None:
    """`register` the running notebook kernel's shell, if this is one (cheap: nothing is imported otherwise)."""
    if "ipykernel" not in sys.modules:
        return
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None:
        register(shell)


def show_batch(batch: Batch) -> None:
    """Display a new live view of `batch` and its static twin; the first view shown becomes `batch.view`."""
    from ..widget.batch_view import BatchWidget

    view = BatchWidget(batch)
    if batch.view is None:
        batch.view = view
    view.show()


def show_compared(compared: ComparedBatch, *, table: bool = True) -> None:
    """Display the models' table (`table`; the magic shows it when the rows are scored) and each model's batch
    widget side by side. "Retry failed rows" in a model's widget makes the retried batch that model's
    (`ComparedBatch.adopt`), which the table follows."""
    import ipywidgets as w  # type: ignore[import-untyped]
    from IPython.display import display

    from ..widget.batch_view import BatchWidget

    if table:
        from ..widget.models_view import ModelsWidget

        view = ModelsWidget(compared)
        if compared.view is None:
            compared.view = view
        view.show()
    columns = []
    for name, batch in compared.batches.items():
        widget = BatchWidget(batch)
        if batch.view is None:
            batch.view = widget
        widget.retried.append(functools.partial(compared.adopt, name))  # the models' table follows a retry
        columns.append(w.VBox([w.HTML(f"<strong>{html.escape(name)}</strong>"), widget],
                              layout=w.Layout(flex="1 1 0", min_width="24em", margin="0 4px")))
    display(w.HBox(columns, layout=w.Layout(flex_flow="row wrap")))  # type: ignore[no-untyped-call]
