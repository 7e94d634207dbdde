"""What a cell can see of the notebook: the namespace snapshot, its tools, and the cell's id.

Kept apart from `magics.py` so the adapter stays an adapter and these rules can be tested alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import ToolDefinitionError
from ...tools import policy_of


def namespace_snapshot(user_ns: Mapping[str, Any], hidden: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The variables a template may read: public names the user defined, read when the cell starts.

    IPython's own entries (`In`, `Out`, `_`, `exit`, …) live in `user_ns_hidden` and are left out,
    as are names starting with an underscore.
    """
    hidden = hidden or {}
    return {k: v for k, v in user_ns.items() if not k.startswith("_") and (k not in hidden or hidden[k] is not v)}


def notebook_tools(user_ns: Mapping[str, Any], names: Sequence[str] | None) -> list[Callable[..., Any]]:
    """The tools a cell exposes: the callables named with `--tools`, or else every decorated one.

    An undecorated function is never exposed implicitly.

    Raises:
        ToolDefinitionError: a named tool is missing or not callable.
    """
    if names:
        found: list[Callable[..., Any]] = []
        for name in names:
            if name not in user_ns:
                raise ToolDefinitionError(f"--tools names {name!r}, which is not defined in the notebook")
            value = user_ns[name]
            if _is_toolset(value):
                continue  # the run's `toolsets=` (`notebook_toolsets`)
            if not callable(value):
                raise ToolDefinitionError(f"--tools names {name!r}, which is a {type(value).__name__}, not a callable")
            found.append(value)
        return found
    return [v for k, v in user_ns.items() if not k.startswith("_") and callable(v) and policy_of(v) is not None]


def notebook_toolsets(user_ns: Mapping[str, Any], names: Sequence[str] | None) -> list[Any]:
    """The pydantic-ai toolsets (an MCP server, a `FunctionToolset`, ...) named with `--tools`; never implicit,
    as an undecorated function is not."""
    return [user_ns[name] for name in names or () if name in user_ns and _is_toolset(user_ns[name])]


def _is_toolset(value: object) -> bool:
    from pydantic_ai.toolsets import AbstractToolset  # here, not at import: `%load_ext` must not load pydantic-ai

    return isinstance(value, AbstractToolset)


def current_parent(shell: Any) -> Mapping[str, Any] | None:
    """The request the kernel is executing now (its header identifies this execution of the cell), if any."""
    kernel = getattr(shell, "kernel", None)
    parent: Any = None
    if kernel is not None and hasattr(kernel, "get_parent"):
        try:
            parent = kernel.get_parent()
        except TypeError:  # ipykernel 6 requires the channel name
            parent = kernel.get_parent("shell")
    if not parent:
        parent = getattr(shell, "parent_header", None)
    return parent if isinstance(parent, Mapping) and parent else None


def current_cell_id(shell: Any) -> str | None:
    """The front end's cell id of the executing cell (JupyterLab and VS Code send one), if any."""
    parent = current_parent(shell)
    cell_id = parent.get("metadata", {}).get("cellId") if parent is not None else None
    return str(cell_id) if cell_id else None
