"""Stop latency, kernel side: comm `{"kind": "stop"}` → the provider connection closed at the server.

Run: `/work/venv/bin/python bench/stop_latency.py` (about a minute; `--stops 10` for a smoke run).
Writes `bench/results/stop_latency.json` and prints p50/p95.

A scripted OpenAI-compatible server (`tests/openai_server.py`) runs on 127.0.0.1 in this process and
streams an endless-looking answer (a piece every 10 ms). A real kernel (through jupyter_client,
`tests/kernelclient.py`, playing the browser) runs `%%agent -m bench_model`, where `bench_model` is a
notebook variable holding pydantic-ai's real `OpenAIChatModel` pointed at that server (httpx + SSE,
as with Ollama or vLLM). Once the first tokens reached the client, after a random 0-300 ms, the
client sends the same comm message the Stop button sends; the figure is the server's
`disconnected_at` minus the send time (one machine, one `time.monotonic()` clock). Also reported:
send → the client seeing `status == "stopped"` (what a person sees).

Both kernels are measured when available: the dev venv's ipykernel 7.x (`python3`) and the
registered ipykernel 6.29 (`agentcell-k6`, `.jupyter-k6/`), interleaved stop by stop.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from tests.kernelclient import KernelSession, WidgetComm, find_k6_kernel, kernel_available
from tests.openai_server import FakeOpenAI, Reply, Text

find_k6_kernel(_common.ROOT)

GOAL_MS = 50.0
CELL = "%%agent -m bench_model\nTell me a very long story about a lighthouse keeper.\n[[answer]]"


def long_reply(_body: dict[str, Any]) -> Reply:
    """About 20 s of answer: 2,000 pieces, 10 ms apart (the server notices a close within a pause)."""
    return Reply(Text("word " * 2_000, pieces=2_000, delay=0.01))


def open_kernel(name: str, server: FakeOpenAI, journal: str) -> KernelSession:
    session = KernelSession(kernel_name=name, extra_env={"AGENTCELL_JOURNAL": journal})
    session.run("%load_ext agentcell")
    session.run(
        "from pydantic_ai.models.openai import OpenAIChatModel\n"
        "from pydantic_ai.providers.openai import OpenAIProvider\n"
        f"bench_model = OpenAIChatModel('fake-model', provider=OpenAIProvider(base_url={server.base_url!r},"
        " api_key='bench'))\n"
    )
    session.version = tuple(int(p) for p in session.run("import ipykernel; print(ipykernel.__version__)")
                            .strip().split(".")[:2])
    return session


def one_stop(session: KernelSession, server: FakeOpenAI, rng: random.Random) -> dict[str, float]:
    requests_before = len(server.chat_requests)
    before = {c.comm_id for c in session.agent_widgets()}
    session.execute(CELL)
    session.wait_until(lambda: any(c.comm_id not in before for c in session.agent_widgets()), what="widget comm")
    comm: WidgetComm = next(c for c in session.agent_widgets() if c.comm_id not in before)
    session.wait_until(lambda: len(session.streamed_text(comm)) > 0, timeout=30, what="first tokens")
    session.wait_until(lambda: len(server.chat_requests) > requests_before, what="request at the server")
    request = server.chat_requests[-1]
    end = time.monotonic() + rng.uniform(0.0, 0.3)
    while time.monotonic() < end:
        session.pump(0.005)
    sent = session.send_custom(comm.comm_id, {"kind": "stop"})
    session.wait_until(lambda: request.disconnected_at is not None or request.outcome != "pending",
                       timeout=30, what="disconnect at the server")
    session.wait_until(lambda: comm.state.get("status") == "stopped", timeout=30, what="status stopped")
    seen_stopped = next(t for t, state in comm.updates if state.get("status") == "stopped")
    if request.disconnected_at is None:
        raise RuntimeError(f"the server saw no disconnect (outcome {request.outcome})")
    return {
        "stop_to_disconnect_ms": (request.disconnected_at - sent) * 1000,
        "stop_to_status_ms": (seen_stopped - sent) * 1000,
        "chunks_before_stop": request.chunks_sent,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stops", type=int, default=60, help="measured stops per kernel (>= 50 for the report)")
    parser.add_argument("--kernels", nargs="+", default=["python3", "agentcell-k6"])
    args = parser.parse_args()
    machine = _common.Machine()
    rng = random.Random(7)
    journal = tempfile.mkdtemp(prefix="agentcell-bench-journal-")
    kernels = [k for k in args.kernels if kernel_available(k)]
    skipped = [k for k in args.kernels if k not in kernels]
    server = FakeOpenAI(default=long_reply).start()
    if server._loop is not None:  # a client reset leaves the server's "gone" read with an unread exception
        server._loop.set_exception_handler(lambda _loop, _ctx: None)
    sessions: dict[str, KernelSession] = {}
    try:
        for name in kernels:
            sessions[name] = open_kernel(name, server, journal)
        for _ in range(3):  # warm-up: imports, first request, schema builds
            for session in sessions.values():
                one_stop(session, server, rng)
        samples = _common.interleaved(
            {name: (lambda s=session: one_stop(s, server, rng)) for name, session in sessions.items()},
            reps=args.stops, warmup=0, on_rep=lambda r: machine.sample() if r % 10 == 0 else None)
        versions = {name: ".".join(map(str, s.version)) for name, s in sessions.items()}
    finally:
        for session in sessions.values():
            session.close()
        server.close()
    results: dict[str, Any] = {}
    rows = []
    for name, runs in samples.items():
        disc = [r["stop_to_disconnect_ms"] for r in runs]
        shown = [r["stop_to_status_ms"] for r in runs]
        entry = {
            "ipykernel": versions[name],
            "stops": len(runs),
            "disconnect_p50_ms": round(_common.percentile(disc, 50), 1),
            "disconnect_p95_ms": round(_common.percentile(disc, 95), 1),
            "disconnect_max_ms": round(max(disc), 1),
            "status_p50_ms": round(_common.percentile(shown, 50), 1),
            "status_p95_ms": round(_common.percentile(shown, 95), 1),
            "p95_vs_goal": round(_common.percentile(disc, 95) / GOAL_MS, 2),
            "samples": runs,
        }
        results[name] = entry
        rows.append([f"{name} (ipykernel {entry['ipykernel']})", len(runs), entry["disconnect_p50_ms"],
                     entry["disconnect_p95_ms"], entry["disconnect_max_ms"], entry["status_p50_ms"],
                     entry["status_p95_ms"], f"x{entry['p95_vs_goal']:.2f}"])
    payload = {"benchmark": "stop_latency", "command": " ".join(["python", *sys.argv]), "goal_ms": GOAL_MS,
               "kernels": results, "skipped_kernels": skipped, "machine": machine.facts()}
    path = _common.write_results("stop_latency", payload)
    print(_common.table(rows, ["kernel", "stops", "disconnect p50 ms", "p95 ms", "max ms", "status p50 ms",
                               "status p95 ms", "p95 / 50 ms goal"]))
    if skipped:
        print(f"skipped (not installed): {', '.join(skipped)}")
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
