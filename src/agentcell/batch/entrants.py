"""Who takes part in a comparison: each model with the name it is shown under, and its own cassette."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import AgentcellError


@dataclass(frozen=True, slots=True, kw_only=True)
class Entrant:
    """One model of a comparison: the name it is shown under and what resolves it."""

    name: str
    model: Any


def entrants(models: Sequence[Any], names: Sequence[str] | None = None) -> tuple[Entrant, ...]:
    """Each model with a distinct display name: its string, its `model_name`, or the name given; a repeat gets `#2`."""
    if not models:
        raise AgentcellError("compare needs at least one model (models=[...] or --models A,B)")
    if names is not None and len(names) != len(models):
        raise AgentcellError(f"compare got {len(models)} models but {len(names)} names")
    out: list[Entrant] = []
    seen: dict[str, int] = {}
    for i, model in enumerate(models):
        base = names[i] if names is not None else model if isinstance(model, str) else str(
            getattr(model, "model_name", None) or type(model).__name__)
        seen[base] = seen.get(base, 0) + 1
        out.append(Entrant(name=base if seen[base] == 1 else f"{base}#{seen[base]}", model=model))
    return tuple(out)


def cassette_for(path: str, model: str) -> str:
    """Each model's own cassette beside `path`: `run.json` → `run.openai-gpt-4o-mini.json`."""
    p = Path(path)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-") or "model"
    return str(p.with_name(f"{p.stem}.{slug}{p.suffix or '.json'}"))
