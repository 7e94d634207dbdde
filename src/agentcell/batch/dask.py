"""Rows on a Dask cluster: `map(..., client=distributed.Client)` / `%%agent --over X --engine dask`.

Each row is one Dask task (`run_row`), submitted while fewer than `concurrency` are out, awaited on
the kernel's loop through an **asynchronous** `distributed.Client` created on that loop (no
`run_sync`), and folded into the same `Batch` (and widget) as an in-kernel row. What travels to the
workers is Dask's own serialization (cloudpickle): the compiled template (as compiled in the kernel,
so includes found through `--include-path` and `--types` definitions travel with it; a worker never
resolves a path), the run options with the variables the template reads (not the whole notebook namespace), the
tools, and the row. Everything is pickled once before any row starts, so a tool closing over a lock,
a connection or a generator gets a one-line `BatchError` naming it instead of 1,000 failed tasks.

On a worker every row runs on the process's one row loop (`dask_loop.py`), not a fresh loop per row, so the
rows share one MCP server per spec and worker process: each worker starts its own from the pickled
`agentcell.mcp(...)` spec on first use, and a worker plugin ends them when the worker closes.

Stop cancels the futures: pending rows never start. Dask cannot interrupt a task already running
in a worker thread, so each row task also watches a per-batch `distributed.Event` and stops its run
(closing its provider request) when the kernel sets it.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import AgentcellError
from ..options import RunOptions
from ..template.program import Template
from .errors import BatchError
from .inputs import Row
from .results import RowResult

if TYPE_CHECKING:
    from .runner import Batch

STOP_POLL_S = 0.2
"""How often a row running on a worker checks whether the batch was stopped."""


class DaskRows:
    """The `RowRunner` that sends each row to a Dask cluster."""

    def __init__(self, client: Any, template: Template, options: RunOptions) -> None:
        if not getattr(client, "asynchronous", False):
            raise BatchError(
                "client= must be an asynchronous distributed.Client created in this kernel: "
                "`client = await distributed.Client(cluster_or_address, asynchronous=True)`"
            )
        self.client = client
        self.stop_name = f"agentcell-stop-{uuid.uuid4().hex[:12]}"
        context = {k: v for k, v in (options.context or {}).items() if k in template.variables}
        self.options = replace(options, context=context, approve=None)
        self._payload = _checked_payload(template, self.options)
        self._batch: Batch | None = None
        self._stop_event: Any = None
        self._plugin: asyncio.Future[Any] | None = None

    def bind(self, batch: Batch) -> None:
        self._batch = batch

    async def __call__(self, row: Row, run_id: str) -> RowResult:
        assert self._batch is not None
        base = self._batch.rows[row.index]
        if self._plugin is None:  # once, before the first row: the workers end their row loops when they close
            from .dask_loop import RowLoopPlugin

            self._plugin = asyncio.ensure_future(self.client.register_plugin(RowLoopPlugin()))
        await asyncio.shield(self._plugin)
        future = self.client.submit(run_row, self._payload, row.variables, run_id, self.stop_name,
                                    key=f"agentcell-row-{row.index}-{run_id}", pure=False)
        try:
            outcome: dict[str, Any] = await future
        except asyncio.CancelledError:
            await self._stop_workers()
            await self.client.cancel([future])
            raise
        from ..usage import Usage

        return replace(base, status=outcome["status"], results=outcome["results"], error=outcome["error"],
                       usage=Usage(**outcome["usage"]), run_id=run_id)

    async def _stop_workers(self) -> None:
        if self._stop_event is None:
            from distributed import Event

            self._stop_event = Event(self.stop_name, client=self.client)  # type: ignore[no-untyped-call]
            await self._stop_event.set()


def travelling(rows: list[Row]) -> list[Row]:
    """`rows`, each whose fields cannot be pickled for a worker (a lock, a connection, a generator) marked with a
    problem that names the field: checked before any row starts, that row fails alone and the others run."""
    import cloudpickle

    out = []
    for row in rows:
        problem = None
        if row.problem is None:
            try:
                cloudpickle.dumps(dict(row.fields))
            except Exception:  # whatever pickling raises: find the field and say it
                problem = _unpicklable_field(row)
        out.append(row if problem is None else replace(row, problem=problem))
    return out


def _unpicklable_field(row: Row) -> str:
    import cloudpickle

    for name, value in row.fields.items():
        try:
            cloudpickle.dumps(value)
        except Exception as exc:  # the first field that cannot travel
            return (f"row {row.index}'s {name!r} cannot be sent to Dask workers ({type(exc).__name__}: {exc}); "
                    "the row was not run")
    return f"row {row.index} cannot be sent to Dask workers; the row was not run"


def _checked_payload(template: Template, options: RunOptions) -> bytes:
    """Everything a row needs on a worker, pickled once; a `BatchError` naming what cannot travel."""
    import cloudpickle

    for tool in options.tools:
        try:
            cloudpickle.dumps(tool)
        except Exception as exc:  # whatever pickling raises, the user needs the tool's name and the cause
            name = getattr(tool, "__name__", None) or getattr(tool, "name", None) or repr(tool)
            raise BatchError(
                f"tool {name!r} cannot be sent to Dask workers ({type(exc).__name__}: {exc}); make it a plain "
                "function that opens what it needs inside, or run without --engine dask"
            ) from None
    for toolset in options.toolsets:
        try:
            cloudpickle.dumps(toolset)
        except Exception as exc:  # a live client (an MCP session, a lock): name it; `agentcell.mcp(...)` travels
            raise BatchError(
                f"the toolset {toolset!r} cannot be sent to Dask workers ({type(exc).__name__}: {exc}); for an MCP "
                "server pass agentcell.mcp(...) (each worker starts its own from its command), or run without "
                "--engine dask"
            ) from None
    for key, value in (options.context or {}).items():
        try:
            cloudpickle.dumps(value)
        except Exception as exc:  # same: name the variable
            raise BatchError(f"variable {key!r} cannot be sent to Dask workers ({type(exc).__name__}: {exc})") from None
    try:
        cloudpickle.dumps(template)
    except Exception as exc:  # e.g. a notebook type that holds something unpicklable
        raise BatchError(
            f"the compiled template cannot be sent to Dask workers ({type(exc).__name__}: {exc})"
        ) from None
    try:
        return bytes(cloudpickle.dumps((template, options)))
    except Exception as exc:  # the model (a client with a lock inside), deps, or a callback
        raise BatchError(
            f"the run options cannot be sent to Dask workers ({type(exc).__name__}: {exc}); pass the model by "
            "name (e.g. 'openai:gpt-4o-mini') rather than as an object"
        ) from None


def run_row(payload: bytes, fields: dict[str, Any], run_id: str, stop_name: str) -> dict[str, Any]:
    """On a worker: run one row as an engine run on the process's row loop (`dask_loop.py`, where its MCP servers
    stay between rows), waiting in this worker thread; a plain dict back."""
    import cloudpickle

    from . import dask_loop

    template, options = cloudpickle.loads(payload)
    return dask_loop.run(_run_row(template, options, fields, run_id, stop_name, _this_worker()))


def _this_worker() -> Any:
    """The Dask worker running this task (`None` outside one): read here, in the task's thread."""
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


async def _run_row(
    template: Template, options: RunOptions, fields: dict[str, Any], run_id: str, stop_name: str, worker: Any
) -> dict[str, Any]:
    from pydantic_core import to_jsonable_python

    from ..engine import start

    try:
        run = start(template,
                    replace(options, context={**(options.context or {}), **fields}, run_id=run_id))
    except AgentcellError as exc:
        return {"status": "failed", "results": {}, "error": str(exc), "usage": {}}
    watcher = asyncio.get_running_loop().create_task(_watch_stop(stop_name, run, worker))
    try:
        result = await run.wait()
    finally:
        watcher.cancel()
    return {"status": result.status, "results": dict(result.results), "error": result.error,
            "usage": to_jsonable_python(result.usage)}


async def _watch_stop(stop_name: str, run: Any, worker: Any) -> None:
    """Stop `run` when the kernel sets the batch's stop event.

    The wait runs on the worker's own loop (where its client lives) in short timed waits, so a row
    that ends just lets the last one time out: cancelling a wait mid-flight would make the scheduler
    log a `CancelledError` per row.
    """
    if worker is None:
        return
    finished = threading.Event()
    waiting = asyncio.run_coroutine_threadsafe(_stop_set(stop_name, worker.client, finished),
                                               worker.loop.asyncio_loop)
    try:
        while not waiting.done():
            await asyncio.sleep(STOP_POLL_S / 4)
    finally:
        finished.set()
    if waiting.result():
        run.cancel()


async def _stop_set(stop_name: str, client: Any, finished: threading.Event) -> bool:
    """On the worker's loop: `True` once the batch's stop event is set, `False` once the row has finished."""
    from distributed import Event

    event = Event(stop_name, client=client)  # type: ignore[no-untyped-call]
    while not finished.is_set():
        if await event.wait(timeout=STOP_POLL_S):  # type: ignore[no-untyped-call]
            return True
    return False
