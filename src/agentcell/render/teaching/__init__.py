"""The teaching view's Python twin: the run as the model saw it (`view.py`), from the facts `model.py`
derives, with Python signatures (`signature.py`) and the HTTP exchanges (`wire.py`)."""
