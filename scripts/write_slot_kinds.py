"""Rewrite src/agentcell/slot_kinds.json from the slot kinds (src/agentcell/template/kinds.py).

Run after changing a kind: `python scripts/write_slot_kinds.py`. tests/template/test_kinds.py fails while
the committed file differs from what the kinds write.
"""

from agentcell.template.kinds import JSON_PATH, write_json

if __name__ == "__main__":
    write_json()
    print(f"wrote {JSON_PATH}")
