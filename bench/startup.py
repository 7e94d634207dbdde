"""Start-up: `import agentcell` and `%load_ext agentcell` in fresh processes; first event of a cold cell.

Run: `/work/venv/bin/python bench/startup.py` (about 2 minutes; `--quick` for a smoke run).
Writes `bench/results/startup.json` and prints a table.

Fresh-process timings, interleaved (each repetition runs every probe once, in a shuffled order):

* `python -c pass` — the interpreter alone (baseline for process wall time);
* `import agentcell`, `import pydantic_ai`, `import IPython` — import time measured inside the process
  (`perf_counter` around the import) and the whole process's wall time;
* `%load_ext agentcell` — inside a fresh `InteractiveShell`, timed around `run_line_magic` only, with
  `%load_ext autoreload` as a baseline extension; the probe also reports which heavy modules the
  extension pulled in (`pydantic_ai`, `anywidget`, `openai`).

Cold first event: a fresh kernel (jupyter_client), `%load_ext agentcell`, then an `%%agent` cell with
the offline model; the time from the execute request to its reply, to the widget's comm opening, to
the first custom message and to the first one carrying a `token_delta`, against the same cell run
again in the same (now warm) kernel. The `%load_ext` round trip in the fresh kernel is reported too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

from tests.kernelclient import KernelSession

GOAL_IMPORT_S = 0.3
PY = sys.executable

IMPORT_PROBE = (
    "import time, sys; t = time.perf_counter(); import {module}; d = time.perf_counter() - t; "
    "import json; print(json.dumps({{'import_s': d, 'heavy': [m for m in ('pydantic_ai', 'anywidget', 'openai', "
    "'ipywidgets', 'jinja2', 'pydantic') if m in sys.modules]}}))"
)
LOAD_EXT_PROBE = (
    "import time, sys, json; from IPython.core.interactiveshell import InteractiveShell; "
    "ip = InteractiveShell.instance(); t = time.perf_counter(); ip.run_line_magic('load_ext', '{ext}'); "
    "d = time.perf_counter() - t; print(json.dumps({{'import_s': d, 'heavy': [m for m in ('pydantic_ai', "
    "'anywidget', 'openai', 'ipywidgets', 'jinja2', 'pydantic') if m in sys.modules]}}))"
)

PROBES: dict[str, str] = {
    "python -c pass": "pass",
    "import agentcell": IMPORT_PROBE.format(module="agentcell"),
    "import pydantic_ai": IMPORT_PROBE.format(module="pydantic_ai"),
    "import IPython": IMPORT_PROBE.format(module="IPython"),
    "%load_ext agentcell": LOAD_EXT_PROBE.format(ext="agentcell"),
    "%load_ext autoreload": LOAD_EXT_PROBE.format(ext="autoreload"),
}


def probe(code: str) -> dict[str, Any]:
    started = time.perf_counter()
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    wall = time.perf_counter() - started
    data: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}
    return {"process_wall": wall, **data}


def importtime_top(module: str, top: int = 12) -> list[dict[str, Any]]:
    """`python -X importtime -c 'import module'`: the slowest top-level-ish imports (cumulative µs)."""
    out = subprocess.run([PY, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True,
                         timeout=120)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line.removeprefix("import time:").split("|", 2)
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append({"module": name.strip(), "cumulative_ms": int(cum_us) / 1000, "self_ms": int(self_us) / 1000,
                     "depth": depth})
    shallow = [r for r in rows if r["depth"] <= 2]
    shallow.sort(key=lambda r: -r["cumulative_ms"])
    return shallow[:top]


def cold_cell(reps: int, machine: _common.Machine) -> dict[str, Any]:
    cell = "%%agent -m offline\nSay hello.\n[[answer]]"
    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    for _ in range(reps):
        session = KernelSession(kernel_name="python3", extra_env={"AGENTCELL_JOURNAL": "off"})
        try:
            started = time.monotonic()
            session.run("%load_ext agentcell")
            loaded = time.monotonic() - started
            cold.append({"load_ext_in_kernel": loaded, **first_event(session, cell)})
            session.run("pass")  # the first run's end-of-run work (transcript, static view) is done
            warm.append({"load_ext_in_kernel": loaded, **first_event(session, cell)})
        finally:
            session.close()
        machine.sample()
    out: dict[str, Any] = {"reps": reps}
    for key in cold[0]:
        if key == "load_ext_in_kernel":
            out[key] = {"ms": round(_common.median(r[key] for r in cold) * 1000, 1)}
            continue
        c, w = _common.median(r[key] for r in cold), _common.median(r[key] for r in warm)
        out[key] = {"cold_ms": round(c * 1000, 1), "warm_ms": round(w * 1000, 1),
                    "cold_over_warm": round(_common.median(a[key] / b[key] for a, b in zip(cold, warm, strict=True)),
                                            2)}
    out["samples"] = {"cold": cold, "warm": warm}
    return out


def first_event(session: KernelSession, cell: str) -> dict[str, float]:
    before = {c.comm_id for c in session.agent_widgets()}
    sent = time.monotonic()
    msg_id = session.execute(cell)
    session.wait_until(lambda: any(c.comm_id not in before for c in session.agent_widgets()), what="widget comm")
    comm = next(c for c in session.agent_widgets() if c.comm_id not in before)
    opened = time.monotonic()
    session.wait_until(lambda: bool(comm.custom), what="first custom message")
    first_batch = comm.custom[0][0]
    session.wait_until(lambda: bool(session.streamed_text(comm)), what="first token")
    first_token = next(t for t, c in comm.custom if any(e.get("kind") == "token_delta" for e in c.get("events", [])))
    session.wait_until(lambda: msg_id in session.replies, what="execute reply")
    reply = session.replies[msg_id][0]
    session.wait_until(lambda: bool(comm.state.get("final")), timeout=60, what="final trait")
    return {"execute_reply": reply - sent, "widget_comm_open": opened - sent, "first_event_message": first_batch - sent,
            "first_token": first_token - sent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=15, help="fresh processes per probe")
    parser.add_argument("--kernel-reps", type=int, default=5, help="fresh kernels for the cold-cell figure")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.reps, args.kernel_reps = 3, 1
    machine = _common.Machine()
    samples = _common.interleaved({name: (lambda code=code: probe(code)) for name, code in PROBES.items()},
                                  reps=args.reps, warmup=1, on_rep=lambda _r: machine.sample())
    probes: dict[str, Any] = {}
    rows = []
    for name, runs in samples.items():
        entry: dict[str, Any] = {"process_wall_s": round(_common.median(r["process_wall"] for r in runs), 4)}
        entry["process_wall_vs_pass"] = round(_common.paired_ratio(samples, name, "python -c pass", "process_wall"), 2)
        if "import_s" in runs[0]:
            entry["import_s"] = round(_common.median(r["import_s"] for r in runs), 4)
            entry["heavy_modules_loaded"] = runs[0]["heavy"]
        probes[name] = entry
    base = probes["import pydantic_ai"]["import_s"]
    for name, entry in probes.items():
        if "import_s" in entry:
            entry["import_vs_pydantic_ai"] = round(
                _common.paired_ratio(samples, name, "import pydantic_ai", "import_s"), 3)
            entry["import_vs_goal_0.3s"] = round(entry["import_s"] / GOAL_IMPORT_S, 2)
        vs_pai = f"x{entry['import_vs_pydantic_ai']:.3f}" if "import_s" in entry else "-"
        rows.append([name, entry["process_wall_s"], f"x{entry['process_wall_vs_pass']:.2f}",
                     entry.get("import_s", "-"), vs_pai,
                     ",".join(entry.get("heavy_modules_loaded", [])) or "-"])
    print(_common.table(rows, ["probe", "process wall s", "vs python -c pass", "import/load s", "vs pydantic_ai",
                               "heavy modules loaded"]))
    print(f"(import pydantic_ai alone: {base:.3f} s)")
    top = importtime_top("agentcell")
    cold = cold_cell(args.kernel_reps, machine)
    print("\ncold %%agent cell (fresh kernel, first cell after %load_ext) vs the same cell again (warm):")
    crow = [[k, v["cold_ms"], v["warm_ms"], f"x{v['cold_over_warm']:.2f}"] for k, v in cold.items()
            if isinstance(v, dict) and "cold_ms" in v]
    print(f"%load_ext agentcell in the fresh kernel (execute → reply): {cold['load_ext_in_kernel']['ms']} ms")
    print(_common.table(crow, ["execute → …", "cold ms", "warm ms", "cold / warm"]))
    payload = {"benchmark": "startup", "command": " ".join(["python", *sys.argv]), "goal_import_s": GOAL_IMPORT_S,
               "probes": probes, "importtime_agentcell": top, "cold_cell": cold, "machine": machine.facts()}
    path = _common.write_results("startup", payload)
    print(f"load average (1 min) during the run: {payload['machine']['load_avg_samples_1min']}")
    print(f"wrote {path.relative_to(_common.ROOT)}")


if __name__ == "__main__":
    main()
