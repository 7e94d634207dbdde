"""Which `<system>` (or `<header>`) blocks are in force at a slot: scopes and modifiers.

Two lists per tag: *global* blocks (the default) stay in force across checkpoints, *local* ones until
the next checkpoint. A block is added to the blocks of its scope in force (`append`, the default), or
replaces them (`replace`; with empty content it clears them). This is struckdown's documented model;
its runtime ignores the modifiers, we do not. A block applies from its position on (SPEC §2.2).

In force at a slot: the global blocks, then the local ones (struckdown's order).
"""

from __future__ import annotations

from .jinja import CompiledText
from .nodes import Header, System


class Blocks:
    """The blocks of one tag (`<system>` or `<header>`) as the compiler walks the cell."""

    def __init__(self) -> None:
        self._lists: dict[str, list[CompiledText]] = {"global": [], "local": []}
        self._in_force: tuple[CompiledText, ...] = ()
        self.late: System | Header | None = None
        """The first block since the last slot (a warning if no slot follows it)."""

    def add(self, text: CompiledText, node: System | Header) -> None:
        blocks = self._lists[node.scope]
        if node.mode == "replace":
            blocks.clear()
        blocks.append(text)
        self._in_force = (*self._lists["global"], *self._lists["local"])
        self.late = self.late or node

    def slot_passed(self) -> None:
        self.late = None

    def checkpoint(self) -> None:
        if self._lists["local"]:
            self._lists["local"].clear()
            self._in_force = tuple(self._lists["global"])

    @property
    def in_force(self) -> tuple[CompiledText, ...]:
        return self._in_force
