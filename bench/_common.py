"""Shared by the benchmarks: the machine and versions, interleaved repetitions, medians, results files.

The machines these run on are shared and noisy, so every benchmark measures its variants side by side
in one process, interleaved (ABAB…, in a shuffled order each repetition), and reports medians and the
median of per-repetition ratios against a named baseline. Absolute times are kept in the JSON for
reference only.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"

if str(ROOT) not in sys.path:  # `tests.openai_server`, `tests.kernelclient` are imported by name
    sys.path.insert(0, str(ROOT))
if str(ROOT / "src") not in sys.path:
    sys.path.insert(1, str(ROOT / "src"))


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("agentcell", "pydantic-ai-slim", "pydantic", "ipykernel", "ipywidgets", "anywidget",
                 "jupyter_client", "jupyterlab", "playwright", "openai", "httpx"):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out["agentcell_git"] = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5
        ).stdout.strip() + ("+dirty" if _dirty() else "")
    return out


def _dirty() -> bool:
    try:
        return bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"],
                                   capture_output=True, text=True, timeout=5).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return False


class Machine:
    """Machine facts plus the load average sampled at the start, during (`sample()`) and at the end."""

    def __init__(self) -> None:
        self.started = time.time()
        self.loads: list[list[float]] = [load_average()]

    def sample(self) -> None:
        self.loads.append(load_average())

    def facts(self) -> dict[str, Any]:
        self.sample()
        one_minute = [load[0] for load in self.loads if load]
        return {
            "nproc": os.cpu_count(),
            "cpu": cpu_model(),
            "platform": platform.platform(),
            "load_avg_samples_1min": one_minute,
            "load_avg_1min_median": statistics.median(one_minute) if one_minute else None,
            "duration_s": round(time.time() - self.started, 1),
            "versions": versions(),
        }


def median(values: Iterable[float]) -> float:
    data = list(values)
    return statistics.median(data) if data else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): the smallest value with at least q% of the data at or below it."""
    data = sorted(values)
    if not data:
        return float("nan")
    rank = max(1, min(len(data), math.ceil(q / 100 * len(data))))
    return data[rank - 1]


def interleaved(
    variants: dict[str, Callable[[], dict[str, float]]],
    *,
    reps: int,
    warmup: int = 1,
    on_rep: Callable[[int], None] | None = None,
    seed: int = 1,
) -> dict[str, list[dict[str, float]]]:
    """Run each variant `reps` times, all variants once per repetition in a shuffled order.

    Each variant returns a dict of measurements (e.g. `wall`, `cpu`); the result maps variant → one
    dict per repetition (warm-up repetitions are run and dropped).
    """
    rng = random.Random(seed)
    out: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    names = list(variants)
    for rep in range(warmup + reps):
        order = names[:]
        rng.shuffle(order)
        for name in order:
            measured = variants[name]()
            if rep >= warmup:
                out[name].append(measured)
        if on_rep is not None:
            on_rep(rep)
    return out


def paired_ratio(samples: dict[str, list[dict[str, float]]], variant: str, baseline: str, key: str) -> float:
    """Median over repetitions of variant/baseline, both measured in the same repetition."""
    pairs = zip(samples[variant], samples[baseline], strict=True)
    return median(v[key] / b[key] for v, b in pairs if b[key] > 0)


def timed(fn: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """Run `fn` and return its value with wall and process CPU seconds."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    value = fn()
    return value, {"wall": time.perf_counter() - wall0, "cpu": time.process_time() - cpu0}


def write_results(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=repr) + "\n")
    return path


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    """A plain fixed-width table."""
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(r, widths, strict=True))
            for r in cells]
    return "\n".join(out)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:
            return "-"
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


def _numeric(text: str) -> bool:
    return text.replace(".", "", 1).replace("-", "", 1).replace("x", "", 1).replace("%", "", 1).isdigit()
