"""MCP calls on tape: `--record FILE` keeps each server's tool list and call results beside the cassette, and
`--replay FILE` answers from them without starting any server.

A cassette (`providers/cassette.py`) holds the model's side of a run. A replayed run still calls its tools, so
a run with MCP tools would start its servers again, and get other answers (the time, a repository that moved
on). The tape is the tools' side: `FILE.mcp.json` next to the cassette, rewritten after each recorded call
(a stopped run leaves a usable tape), holding per server its tools (name, description, schema, metadata) and
its calls in order (tool, arguments, result or error; an image or file in a result as its base64 and type).
On replay a call is answered by the first unused recorded call of the same tool with the same arguments; one
the tape does not hold is an error the model reads, naming the tape.

Format (version 1)::

    {"agentcell_mcp_tape": 1, "servers": {"time": {"tools": [{"name": …, "description": …,
     "parameters": {…}, "metadata": {…}}], "calls": [{"tool": …, "args": {…}, "result": …}]}}}
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_ai.messages import BinaryContent

from ..errors import McpServerError

TAPE_VERSION = 1
SUFFIX = ".mcp.json"
BINARY_KEY = "binary"
"""A recorded result's image or file: `{"binary": BASE64, "media_type": "image/png"}`."""


def tape_path(cassette: str | os.PathLike[str]) -> Path:
    """Where the tape of the cassette `cassette` lives."""
    return Path(f"{os.fspath(cassette)}{SUFFIX}")


def _taped(value: Any) -> Any:
    """A result with each image or file (`BinaryContent`) as `{"binary": BASE64, "media_type": …}`, so a replay
    gives the model the same picture (a list holds them beside text)."""
    if isinstance(value, BinaryContent):
        return {BINARY_KEY: base64.b64encode(value.data).decode("ascii"), "media_type": value.media_type}
    if isinstance(value, list | tuple):
        return [_taped(item) for item in value]
    return value


def _untaped(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {BINARY_KEY, "media_type"}:
        return BinaryContent(data=base64.b64decode(value[BINARY_KEY]), media_type=str(value["media_type"]))
    if isinstance(value, list):
        return [_untaped(item) for item in value]
    return value


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)


@dataclass
class Tape:
    """One run's MCP tape, recording or replaying (shared by the run's servers: each has its own section)."""

    path: Path
    mode: Literal["record", "replay"]
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    _used: set[tuple[str, int]] = field(default_factory=set)

    @classmethod
    def recording(cls, cassette: str | os.PathLike[str]) -> Tape:
        return cls(tape_path(cassette), "record")

    @classmethod
    def replaying(cls, cassette: str | os.PathLike[str]) -> Tape:
        path = tape_path(cassette)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise McpServerError(f"--replay has no MCP tape at {path} (record the run with --record first)") from None
        except (OSError, ValueError) as exc:
            raise McpServerError(f"cannot read the MCP tape {path}: {exc}") from None
        if not isinstance(data, dict) or data.get("agentcell_mcp_tape") != TAPE_VERSION:
            raise McpServerError(f"{path} is not an agentcell MCP tape of version {TAPE_VERSION}")
        return cls(path, "replay", servers=dict(data.get("servers") or {}))

    # -- record ------------------------------------------------------------------------------------------------

    def record_tools(self, server: str, tools: list[dict[str, Any]]) -> None:
        section = self.servers.setdefault(server, {"tools": [], "calls": []})
        section["tools"] = tools
        self._save()

    def record_call(self, server: str, tool: str, args: dict[str, Any], *, result: Any = None,
                    error: str | None = None) -> None:
        section = self.servers.setdefault(server, {"tools": [], "calls": []})
        entry: dict[str, Any] = {"tool": tool, "args": json.loads(_canonical(args))}
        if error is not None:
            entry["error"] = error
        else:
            entry["result"] = json.loads(_canonical(_taped(result)))
        section["calls"].append(entry)
        self._save()

    def _save(self) -> None:
        data = {"agentcell_mcp_tape": TAPE_VERSION, "servers": self.servers}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-tape-")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1, ensure_ascii=False)
        os.replace(tmp, self.path)

    # -- replay ------------------------------------------------------------------------------------------------

    def tools(self, server: str) -> list[dict[str, Any]]:
        section = self.servers.get(server)
        if section is None:
            names = ", ".join(sorted(self.servers)) or "none"
            raise McpServerError(f"the MCP tape {self.path} holds no server named {server!r} (it holds: {names})")
        return list(section.get("tools") or [])

    def answer(self, server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The recorded call (`result` or `error`) for `tool(args)`, each used once; raise `LookupError` naming
        the tape when it holds none."""
        wanted = _canonical(args)
        for index, call in enumerate((self.servers.get(server) or {}).get("calls") or []):
            if (server, index) in self._used or call.get("tool") != tool or _canonical(call.get("args")) != wanted:
                continue
            self._used.add((server, index))
            found = dict(call)
            if "result" in found:
                found["result"] = _untaped(found["result"])
            return found
        raise LookupError(f"the MCP tape {self.path} has no unused recorded call of {tool}({wanted}) "
                          f"on server {server!r}")
