"""Front ends: where a run is started from and how it is shown (Jupyter, marimo, plain Python, a terminal).

`base.py` says what a front end is; `show.py` is `show()`/`stop_all()`; `jupyter/` is the `%%agent`
magic and what a Jupyter kernel needs; `widget/` is the live views and their protocol with the browser.
Nothing is imported here: `%load_ext agentcell` imports `jupyter/magics.py` and must stay light.
"""
