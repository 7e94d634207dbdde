"""Jupyter and IPython: the `%%agent` / `%agent` magics, the cell's spec, `--wait`, `--over`, the tool table.

Nothing is imported here: `%load_ext agentcell` imports `magics.py` and must stay light.
"""
