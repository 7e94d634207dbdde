"""The words every view uses for statuses and parts of a run, from `labels.json` (shared with `js/src/format.js`).

One file, two readers: the live widget and the saved (static) view cannot drift apart in what they
call a status or a retraction. Placeholders such as `{status}` are filled with `str.format`.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any


@functools.cache
def labels() -> dict[str, dict[str, str]]:
    """The parsed `labels.json`."""
    data: dict[str, dict[str, str]] = json.loads(resources.files("agentcell").joinpath("labels.json").read_text())
    return data


def status_label(status: str) -> str:
    """What a person reads for a run or slot status ("done", "out of budget", …)."""
    return labels()["status"].get(status, status)


def retract_label(reason: str) -> str:
    """Why streamed text was retracted, as the widget says it."""
    table = labels()["retract"]
    return table[reason] if reason in table and reason != "other" else table["other"].format(reason=reason)


def label(key: str, **fields: Any) -> str:
    """An item label from the `label` table, placeholders filled."""
    text = labels()["label"].get(key, key)
    return text.format(**fields) if fields else text
