"""One model of a run's transcript, built from its events; every view and summary reads it.

`Transcript` reduces wire events (the JSON the browser gets) into slots → rounds → items with
retractions applied, usage per slot and per run, and status. It is a port of the widget's
`js/src/state.js`, pinned to it by golden fixtures: both produce the same canonical JSON.
"""

from .model import TERMINAL, Pieces, Round, Slot, is_text_type
from .state import Transcript

__all__ = ["TERMINAL", "Pieces", "Round", "Slot", "Transcript", "is_text_type"]
