"""Static renderings of a run: HTML and text for saved notebooks (`html.py`, `output.py`), Markdown
(`markdown.py`), the teaching view (`teaching/`) and the standalone lesson (`lesson.py`).

The Python mirror of the widget's `js/render` and `js/teach`, read from the one `Transcript`. Nothing
here knows a front end: the front ends import these, never the other way.
"""
