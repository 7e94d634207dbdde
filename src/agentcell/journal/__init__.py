"""The run journal: every event of a run appended to a JSONL file as it happens.

One file per run, `<dir>/<run_id>.jsonl`, where `<dir>` is the per-user data folder
(`~/.local/share/agentcell/journal` on Linux), the `AGENTCELL_JOURNAL` environment variable (a
folder, or `off`), or what `start_run(journal=...)` names. Each line is one row:

* `{"ts", "seg", "event": {...}}` — an event as its dataclass fields plus `kind` (the wire shape);
  `request_completed` rows are the per-request rows (slot, request number, usage, latency);
* `{"ts", "seg", "slot", "index", "messages": [...]}` — pydantic-ai messages of a slot's record from
  `index` on (made before each request and after each response);
* `{"ts", "seg", "history": [...]}` — the conversation the run was seeded with (`history=`);
* the run's last row, `processing_complete`, holds its result without the messages the rows before it
  hold (`"format": 2`, `ending.py`); journals written before hold it whole (no `format` key) and still load.

Rows are written in batches of whole lines (`writer.py`): each row reaches the OS at most
`FLUSH_INTERVAL` (0.2 s) after it was made, and at once before a tool runs, when an approval is asked
and when a slot or the run ends. So a process that dies (`os._exit`, a killed kernel) loses at most the
rows of its last 0.2 s, never the rows before a tool call that killed it. `load(run_id)` restores the run
from it, and `usage_totals(run_id)` sums its request rows.

Journals hold whole transcripts, so they are private: files `0600` in a `0700` folder (`paths.py`),
named by run ids that cannot leave the folder. A run's journal stops at `AGENTCELL_JOURNAL_MAX_MB`
(64 MB by default, `writer.py`); the default folder keeps the newest 200 runs and nothing older than
30 days (`store.py`, also `%agent journal list|clean`). `load` skips rows it cannot read with a
`JournalWarning` and raises nothing but `AgentcellError` (`reader.py`).
"""

from __future__ import annotations

from .paths import JOURNAL_ENV, JournalOption, check_run_id, default_dir, journal_path
from .reader import JournalRecord, load, usage_totals
from .store import JournalFile, Retention, clean, journal_command, list_runs, prune_default
from .writer import MAX_MB_ENV, Journal, event_adapter

__all__ = [
    "JOURNAL_ENV",
    "MAX_MB_ENV",
    "Journal",
    "JournalFile",
    "JournalOption",
    "JournalRecord",
    "Retention",
    "check_run_id",
    "clean",
    "default_dir",
    "event_adapter",
    "journal_command",
    "journal_path",
    "list_runs",
    "load",
    "prune_default",
    "usage_totals",
]
