"""Browser fixtures live in `lab.py` so test modules can import its helpers by name."""

from tests.browser.lab import lab, page

__all__ = ["lab", "page"]
