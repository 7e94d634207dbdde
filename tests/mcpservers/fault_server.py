"""A small stdio MCP server that misbehaves on request (`python fault_server.py MODE`), for the fault tests.

Modes: `ok` (behaves), `http:PORT` (behaves, over streamable HTTP on 127.0.0.1), `exit` (writes to stderr and exits before the handshake), `hang` (never answers
`initialize`), `garbage` (writes bytes that are not UTF-8 to stdout, then serves). Whatever the mode, its tools
are `echo` (read-only), `write_note` (no hints: a write), `crash` (the process dies mid-call), `boom` (raises),
`big` (returns 5 MB), `slow` (takes ten minutes) and `picture` (returns a PNG image). With
`FAULT_SERVER_STARTS=FILE` in its environment it appends its pid to FILE as it starts (tests count servers).
"""

from __future__ import annotations

import base64
import os
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"

if os.environ.get("FAULT_SERVER_STARTS"):  # a test counting how many servers were started: one line each
    with open(os.environ["FAULT_SERVER_STARTS"], "a") as log:
        log.write(f"{os.getpid()}\n")

if MODE == "exit":
    sys.stderr.write("fault_server: cannot open the database /nonexistent/db.sqlite\n")
    sys.exit(3)
if MODE == "hang":
    sys.stderr.write("fault_server: waiting forever\n")
    sys.stderr.flush()
    while True:
        time.sleep(60)
if MODE == "garbage":
    os.write(1, b"\xff\xfe\xfa not utf-8 \x80\x81\n")

from fastmcp import FastMCP  # noqa: E402  (after the modes that must fail before any import cost)
from mcp.types import ImageContent  # noqa: E402

server = FastMCP("fault")

# 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


@server.tool(annotations={"readOnlyHint": True})
def echo(text: str) -> str:
    """Say `text` back."""
    return f"echo: {text}"


@server.tool()
def write_note(text: str) -> str:
    """Write a note (no hints: a write)."""
    return f"noted: {text}"


@server.tool(annotations={"readOnlyHint": True})
def crash(text: str) -> str:
    """Die in the middle of the call."""
    sys.stderr.write("fault_server: crashing now\n")
    sys.stderr.flush()
    os._exit(7)


@server.tool(annotations={"readOnlyHint": True})
def boom(text: str) -> str:
    """Raise an error."""
    raise ValueError(f"boom on {text!r}")


@server.tool(annotations={"readOnlyHint": True})
def big(text: str) -> str:
    """Return 5 MB of text."""
    return "x" * (5 * 1024 * 1024)


@server.tool(annotations={"readOnlyHint": True})
async def slow(text: str) -> str:
    """Take ten minutes (longer than any test's hang guard)."""
    import asyncio

    await asyncio.sleep(600)
    return "late"


@server.tool(annotations={"readOnlyHint": True})
def picture(text: str) -> ImageContent:
    """Return a PNG image."""
    return ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png")


if __name__ == "__main__":
    if MODE.startswith("http:"):  # `http:PORT`: streamable HTTP on 127.0.0.1
        server.run(transport="http", host="127.0.0.1", port=int(MODE.split(":")[1]), show_banner=False)
    else:
        server.run(show_banner=False)
