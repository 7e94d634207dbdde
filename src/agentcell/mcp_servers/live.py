"""One running MCP server: its process (or HTTP session), the stderr agentcell reads, and its end.

Why it looks like this:

* **A real stderr.** A stdio server's stderr goes to a file of ours (`stderr_path`), never to the
  process's `sys.stderr`: under ipykernel that is an `OutStream` without a file descriptor, and starting a
  server against it fails with `UnsupportedOperation: fileno`. The file's last lines go into every error
  sentence about the server.
* **A keeper task.** The server is entered (spawned, `initialize`d) inside a task of its own that holds the
  pydantic-ai `MCPToolset` open until `stop()`, so runs reuse the session (entering an entered toolset is a
  counter) and no run's cancellation scope owns it: Stop cancels a run's call, never the server.
* **No orphans.** The stdio client starts the server in its own process group and, on close, closes its
  stdin, then sends SIGTERM and SIGKILL to the group. The group's id is read back from `/proc` (the child
  whose stderr is our file), so `kill_now()` can end it synchronously where no event loop is left to
  close it (interpreter exit, kernel shutdown: `registry.py` registers that with `atexit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..errors import McpServerError
from .spec import ServerSpec

if TYPE_CHECKING:
    from mcp_types import Tool as McpTool
    from pydantic_ai.mcp import MCPToolset

State = Literal["starting", "running", "failed", "stopped"]

TAIL_LINES = 5
"""How many of the server's last stderr lines an error sentence quotes."""
TAIL_CHARS = 600


def _import_mcp() -> tuple[Any, Any, Any]:
    try:
        from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport
    except ImportError as exc:
        raise McpServerError(
            f"MCP servers need agentcell's mcp extra (pip install 'agentcell[mcp]'): {exc}"
        ) from None
    return StdioTransport, StreamableHttpTransport, SSETransport


class LiveServer:
    """A server of one `ServerSpec` on one event loop; made by the registry, started once, stopped once."""

    def __init__(self, spec: ServerSpec, loop: asyncio.AbstractEventLoop) -> None:
        self.spec = spec
        self.loop = loop
        self.state: State = "starting"
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.pid: int | None = None
        self.start_s: float | None = None
        """Seconds from spawn to the tool list (`%agent mcp`, bench/)."""
        self.calls = 0
        self.stderr_path: Path | None = None
        self.toolset: MCPToolset[Any] | None = None
        self._transport: Any = None
        self._keeper: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] = loop.create_future()

    # -- start -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Spawn and initialise the server; raise `McpServerError` in one sentence if it does not come up."""
        from pydantic_ai.mcp import MCPToolset

        stdio, http, sse = _import_mcp()
        spec = self.spec
        if spec.transport == "stdio":
            folder = Path(tempfile.mkdtemp(prefix="agentcell-mcp-"))
            self.stderr_path = folder / f"{spec.name}.stderr"
            self.stderr_path.touch()
            env = dict(spec.env) if spec.env else None
            self._transport = stdio(
                spec.command[0], list(spec.command[1:]), env=env, cwd=spec.cwd, keep_alive=True,
                log_file=self.stderr_path,
            )
        elif spec.url is not None and spec.url.rstrip("/").endswith("/sse"):
            self._transport = sse(spec.url)
        else:
            self._transport = http(spec.url)
        self.toolset = MCPToolset(
            self._transport, id=spec.name, init_timeout=spec.start_timeout, tool_error_behavior="failed"
        )
        started = time.perf_counter()
        self._keeper = asyncio.create_task(self._keep(), name=f"agentcell-mcp-{spec.name}")
        try:
            async with asyncio.timeout(spec.start_timeout + 5):  # the client's own bound comes first
                await asyncio.shield(self._ready)
        except TimeoutError:
            await self.stop()
            hung = f"did not answer `initialize` within {spec.start_timeout:g} s"
            raise McpServerError(self.sentence(hung)) from None
        except asyncio.CancelledError:
            await asyncio.shield(self.stop())
            raise
        except Exception as exc:
            await self.stop()
            self.state = "failed"
            self.error = self.sentence(_start_failure(exc, http=spec.transport == "http"))
            raise McpServerError(self.error) from None
        self.start_s = time.perf_counter() - started
        self.state = "running"

    async def _keep(self) -> None:
        assert self.toolset is not None
        try:
            async with self.toolset:
                self.tools = await self.toolset.list_tools()
                self.pid = _find_child(self.stderr_path)
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            await self._close_transport()

    async def _close_transport(self) -> None:
        close = getattr(self._transport, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()

    # -- use ---------------------------------------------------------------------------------------------------

    def mark_failed(self, reason: str) -> str:
        """The server broke while in use: remember why (one sentence) and end it in the background."""
        self.error = self.sentence(reason)
        if self.state != "stopped":
            self.state = "failed"
            self._stop.set()
        return self.error

    def sentence(self, what: str) -> str:
        """`the MCP server NAME (`COMMAND`) WHAT; its stderr ended with: …` — the one sentence every fault is."""
        text = f"the MCP server {self.spec.name!r} (`{self.spec.shown}`) {what}"
        if self.stderr_path is None:
            return text  # an HTTP server's stderr is not ours to read
        tail = self.stderr_tail()
        return f"{text}; its stderr ended with: {tail}" if tail else f"{text} (its stderr was empty)"

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr, joined with ' | ' (empty for an HTTP server)."""
        if self.stderr_path is None:
            return ""
        try:
            with self.stderr_path.open("rb") as handle:
                handle.seek(0, os.SEEK_END)
                size = handle.tell()
                handle.seek(max(0, size - 8192))
                raw = handle.read()
        except OSError:
            return ""
        lines = [line.strip() for line in raw.decode("utf-8", "replace").splitlines() if line.strip()]
        lines = [line for line in lines if set(line) - set("│╭╮╰╯─ ")]  # a rich traceback's frame lines
        text = " | ".join(lines[-TAIL_LINES:])
        return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]

    # -- stop --------------------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """End the server and wait for its process to be gone (bounded by the stdio client's escalation)."""
        if self.state != "failed":
            self.state = "stopped"
        self._stop.set()
        keeper = self._keeper
        if keeper is not None and not keeper.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(keeper), timeout=10)
        if keeper is None:
            await self._close_transport()
        self.kill_now()

    def kill_now(self) -> None:
        """End the process group at once, without an event loop (interpreter exit); a no-op once it is gone."""
        pid = self.pid
        if pid is None:
            return
        try:
            os.killpg(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError, OSError):
            return
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.01)
        # The rest of the group (a server's own children) may outlive its leader: SIGKILL reaches them too.
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(pid, signal.SIGKILL)

    @property
    def alive(self) -> bool:
        return self.state in ("starting", "running") and not self.loop.is_closed()


def _start_failure(exc: BaseException, *, http: bool = False) -> str:
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, (FileNotFoundError, PermissionError)):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        exc = cause
    if isinstance(exc, FileNotFoundError):
        return f"could not be started: no such command ({exc.filename or exc})"
    if isinstance(exc, PermissionError):
        return f"could not be started: permission denied ({exc.filename or exc})"
    text = str(exc) or type(exc).__name__
    if "Connection closed" in text:
        return "exited before it finished the MCP handshake"
    if http and text.startswith("Client failed to connect: ") and "Failed to initialize" not in text:
        return f"could not be reached: {text.removeprefix('Client failed to connect: ')}"
    if "Failed to initialize" in text:
        return "did not complete the MCP handshake (it hung, or wrote something that is not MCP to stdout)"
    return f"failed to start: {type(exc).__name__}: {text}"


def _find_child(stderr_path: Path | None) -> int | None:
    """The pid of our child whose stderr is `stderr_path` (Linux `/proc`; `None` elsewhere or if not found)."""
    if stderr_path is None or not Path("/proc/self").exists():
        return None
    target = str(stderr_path.resolve())
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as handle:
                ppid = handle.read().rsplit(")", 1)[1].split()[1]
            if ppid == me and os.readlink(f"/proc/{name}/fd/2") == target:
                return int(name)
        except (OSError, IndexError):
            continue
    return None


def _alive(pid: int) -> bool:
    """The group leader `pid` is still running: it answers signal 0 and is not a zombie.

    An exited leader nobody has reaped yet (a zombie) still answers signal 0. Reaping it is not ours to do:
    the process belongs to the stdio client's asyncio subprocess, whose child watcher waits for it, and when
    this reaped it first the watcher logged "Unknown child process pid …, will report returncode 255" into
    the cell's output.
    """
    try:
        os.killpg(pid, 0)
    except (ProcessLookupError, PermissionError, OSError):
        return False
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """`pid` has exited and waits to be reaped (Linux `/proc`; False where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False
