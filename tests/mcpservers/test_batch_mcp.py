"""A batch's rows share one MCP server per process (not one per row); for Dask the spec travels and a toolset
that cannot be sent to a worker is refused before any row starts."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from agentcell.batch import BatchError, map
from agentcell.batch.dask import _checked_payload
from agentcell.mcp_servers import mcp, registry
from agentcell.options import RunOptions
from agentcell.template import compile_template
from tests.batch.conftest import calling

from .conftest import fault

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.usefixtures("no_leftover_servers")]  # real servers

TEMPLATE = "SHOUT: {{ item }} [[answer|use_tools=true]]"


async def test_twelve_rows_share_one_server() -> None:
    words = [f"w{i}" for i in range(12)]
    model = calling("echo", "text", then=lambda returns: returns[-1].upper())
    started: list[int] = []
    ensure = registry.ensure

    async def counting(spec: Any) -> Any:
        live = await ensure(spec)
        started.append(id(live))
        return live

    registry.ensure = counting  # type: ignore[assignment]
    try:
        result = await map(TEMPLATE, words, model=model, concurrency=6, journal=False,
                           toolsets=[mcp(fault(), name="f")])
    finally:
        registry.ensure = ensure  # type: ignore[assignment]
    assert [r["answer"] for r in result.to_records()] == [f"ECHO: {w.upper()}" for w in words]
    (live,) = registry.running()
    assert set(started) == {id(live)} and live.calls == 12


class Locked(AbstractToolset[Any]):
    """A toolset holding a live resource (a lock, as a connected client would)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    @property
    def id(self) -> str | None:
        return "locked"

    def __repr__(self) -> str:
        return "Locked()"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any],
                        tool: ToolsetTool[Any]) -> Any:
        return None


async def test_an_mcp_server_travels_to_dask_as_its_spec_and_a_live_toolset_is_refused() -> None:
    template = compile_template(TEMPLATE)
    assert _checked_payload(template, RunOptions(toolsets=[mcp(fault(), name="f")]))
    with pytest.raises(BatchError, match=r"^the toolset Locked\(\) cannot be sent to Dask workers \(TypeError: "):
        _checked_payload(template, RunOptions(toolsets=[Locked()]))
