"""Which `<system>` (or `<header>`) blocks are in force at a slot: scopes and modifiers.

Two lists per tag: *global* blocks (the default) stay in force across checkpoints, *local* ones until
the next checkpoint. A block is added to the blocks of its scope in force (`append`, the default), or
replaces them (`replace`; with empty content it clears them). This is struckdown's documented model;
its runtime ignores the modifiers, we do not. A block applies from its position on.

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
        self._unused: dict[str, list[CompiledText]] = {"global": [], "local": []}
        """Blocks in force that no slot has been given yet (their variables are recorded once, at the first)."""
        self.late: System | Header | None = None
        """The first block since the last slot (a warning if no slot follows it)."""

    def add(self, text: CompiledText, node: System | Header) -> None:
        blocks = self._lists[node.scope]
        if node.mode == "replace":
            blocks.clear()
            self._unused[node.scope].clear()
        blocks.append(text)
        self._unused[node.scope].append(text)
        self._in_force = (*self._lists["global"], *self._lists["local"])
        self.late = self.late or node

    def slot_passed(self) -> None:
        self.late = None

    def checkpoint(self) -> None:
        if self._lists["local"]:
            self._lists["local"].clear()
            self._unused["local"].clear()
            self._in_force = tuple(self._lists["global"])

    def take_unused(self) -> list[CompiledText]:
        """The blocks in force that are new since the last slot, in `in_force` order (then forgotten).

        Looking only at these keeps compiling linear when every section of a long cell adds a block."""
        unused = [*self._unused["global"], *self._unused["local"]]
        self._unused["global"].clear()
        self._unused["local"].clear()
        return unused

    @property
    def in_force(self) -> tuple[CompiledText, ...]:
        return self._in_force
