"""Write `src/agentcell/transcript/literals.json` (statuses, item types) from the Python types.

Run `PYTHONPATH=src python scripts/write_literals.py` after changing `RunStatus`, `SlotStatus`, `LiveStatus`
(`agentcell/usage.py`) or the item types (`agentcell/transcript/items.py`); `tests/transcript/test_transcript.py`
fails until the file is written again. The widget's reducer (`js/src/state/`) reads it.
"""

from agentcell.transcript.items import LITERALS_JSON, literals_text

if __name__ == "__main__":
    LITERALS_JSON.write_text(literals_text())
    print(f"wrote {LITERALS_JSON}")
