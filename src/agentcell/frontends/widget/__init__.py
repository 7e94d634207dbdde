"""The live views (anywidget): a run's (`widget.py`), a batch's (`batch_view.py`), their protocol with the
browser (`protocol.py`, `shared_texts.py`) and how their output is kept in a saved notebook (`saved_outputs.py`).
"""
