"""What produced a run: the cell's template, its flags or options, and the values `{{ }}` took — secrets masked.

The template is the thing being taught, so the teaching view (the widget's `source` trait) and the lesson
export show it at the top of each run. `cell_source` builds the value once, where the run starts (the
`%%agent` magic, `show()`, `start_run`), masking on the way: key-shaped text and URL passwords in the
template, the flags and every value (`providers/secrets.py`), the run's model credentials
(`known_secrets.py`), and the whole value of a variable whose *name* says it is a secret (`api_key`,
`token`, …). `remember` keeps the newest few by run id, so a lesson exported from a `RunResult` (what
`--wait` returns) still finds its cell.
"""

from __future__ import annotations

import html
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..providers.known_secrets import model_secrets
from ..providers.secrets import MASK, mask_secrets

VALUE_CHARS = 300
"""A value is shown cut to this many characters (its repr)."""
KEPT = 200
"""How many runs' sources `remember` keeps."""
_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|credential|auth", re.IGNORECASE)

_kept: OrderedDict[str, CellSource] = OrderedDict()


@dataclass(frozen=True, slots=True, kw_only=True)
class CellSource:
    """A run's template as written, how it was started, and the values its `{{ }}` read."""

    template: str
    """The template text (the cell below its `%%agent` line), masked."""
    call: str = ""
    """`%%agent --step --inject lookup=error` for a cell; `show(step=True, …)` for Python; masked."""
    values: tuple[tuple[str, str], ...] = ()
    """Each free variable of the template and its value's repr (cut, masked), in name order."""
    kind: Literal["cell_source"] = "cell_source"

    def as_json(self) -> dict[str, Any]:
        return {"template": self.template, "call": self.call, "values": [list(pair) for pair in self.values]}


def _shown(name: str, value: Any, extra: list[str]) -> str:
    if _SECRET_NAME.search(name):
        return MASK
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    text = mask_secrets(text, extra)
    return text if len(text) <= VALUE_CHARS else f"{text[: VALUE_CHARS - 1]}…"


def cell_source(
    template: str, *, call: str = "", context: Mapping[str, Any] | None = None,
    variables: frozenset[str] | set[str] = frozenset(), model: Any = None,
) -> CellSource:
    """The masked `CellSource` of a run: `variables` are the template's free names, read from `context`."""
    extra = [s for s in model_secrets(model) if s] if model is not None and not isinstance(model, str) else []
    ctx = context or {}
    values = tuple((name, _shown(name, ctx[name], extra)) for name in sorted(variables) if name in ctx)
    return CellSource(template=mask_secrets(template, extra), call=mask_secrets(call, extra), values=values)


def remember(run_id: str, source: CellSource) -> None:
    """Keep `source` for `run_id` (the newest `KEPT` runs)."""
    _kept[run_id] = source
    _kept.move_to_end(run_id)
    while len(_kept) > KEPT:
        _kept.popitem(last=False)


def recalled(run_id: str | None) -> CellSource | None:
    return None if run_id is None else _kept.get(run_id)


def python_call(function: str, options: Mapping[str, Any]) -> str:
    """How a Python call started the run, for the lesson: `show(step=True, inject=['lookup=error'])`.

    Only the options that say how the run went (not tools, context or callbacks, shown elsewhere)."""
    shown = []
    for name in ("model", "step", "predict", "inject", "limits"):
        value = options.get(name)
        if value in (None, False, (), []):
            continue
        if name == "model" and not isinstance(value, str):
            value = getattr(value, "model_name", type(value).__name__)
        if name == "inject" and isinstance(value, list | tuple):
            value = list(value)
        shown.append(f"{name}={value!r}")
    return f"{function}({', '.join(shown)})"


def source_html(source: CellSource) -> str:
    """The cell as the lesson shows it: the call line, the template, then the values table."""
    call = f'<div class="ac-source-call"><code>{html.escape(source.call)}</code></div>' if source.call else ""
    rows = "".join(
        f'<tr><th scope="row"><code>{{{{ {html.escape(name)} }}}}</code></th>'
        f"<td><code>{html.escape(value)}</code></td></tr>"
        for name, value in source.values
    )
    table = (
        '<table class="ac-source-values"><caption>The values <code>{{ }}</code> took</caption>'
        f"<tbody>{rows}</tbody></table>" if rows else ""
    )
    return (
        '<section class="ac-source" aria-label="the cell that produced this run"><h3>The cell</h3>'
        f'{call}<pre class="ac-source-template">{html.escape(source.template)}</pre>{table}</section>'
    )
