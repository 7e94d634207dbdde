"""`faster_init` for the compiler's frozen, slotted dataclasses (it lives with the values: `formats/frozen.py`,
which the events use too)."""

from __future__ import annotations

from ..formats.frozen import faster_init as faster_init
