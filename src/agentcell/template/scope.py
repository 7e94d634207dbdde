"""Which `<system>` (or `<header>`) blocks are in force at a slot: scopes and modifiers.

Two lists per tag: *global* blocks stay in force across checkpoints, *local* ones until the next
checkpoint. A block's mode says how it joins them:

* no modifier (`group`): blocks written with no slot or checkpoint between them are joined; the
  first one after a slot or checkpoint replaces the blocks of its scope (SPEC §2.2, unchanged);
* `append`: added to the blocks of its scope in force;
* `replace`: replaces the blocks of its scope (with empty content it clears them).

In force at a slot: the global blocks, then the local ones (struckdown's order).
"""

from __future__ import annotations

from .jinja import CompiledText
from .nodes import Header, System


class Blocks:
    """The blocks of one tag (`<system>` or `<header>`) as the compiler walks the cell."""

    def __init__(self) -> None:
        self._lists: dict[str, list[CompiledText]] = {"global": [], "local": []}
        self._fresh = {"global": True, "local": True}
        self.late: System | Header | None = None
        """The first block since the last slot (a warning if no slot follows it)."""

    def add(self, text: CompiledText, node: System | Header) -> None:
        blocks = self._lists[node.scope]
        if node.mode == "replace" or (node.mode == "group" and self._fresh[node.scope]):
            blocks.clear()
        blocks.append(text)
        self._fresh[node.scope] = False
        self.late = self.late or node

    def slot_passed(self) -> None:
        self._fresh = {"global": True, "local": True}
        self.late = None

    def checkpoint(self) -> None:
        self._lists["local"].clear()
        self._fresh = {"global": True, "local": True}

    @property
    def in_force(self) -> tuple[CompiledText, ...]:
        return (*self._lists["global"], *self._lists["local"])
