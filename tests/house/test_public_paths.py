"""Import paths users may already use keep working after the move into packages (by re-export).

`agentcell` itself is pinned by `test_public_api.py`; these are the modules a notebook or a struckdown
port imports by name. Each name must be the very object its new home defines, not a copy.
"""

from __future__ import annotations

import importlib

import pytest

EVENTS = [
    "ApprovalRequested", "ApprovalResolved", "CheckpointReached", "CompactionFinished", "CompactionStarted",
    "ContextUpdated", "Event", "GuardTripped", "HttpExchange", "Limits", "ModelRequestSent",
    "ModelResponseReceived", "ProcessingComplete", "RequestCompleted", "RetractReason", "Retrying",
    "RunResumed", "RunStarted", "RunStatus", "RunWarning", "SlotCompleted", "SlotFailed", "SlotInfo",
    "SlotRetracted", "SlotStarted", "ThinkingDelta", "TokenDelta", "ToolCompleted", "ToolStarted", "ToolsListed", "Usage",
    "UsageUpdated",
]

PATHS: dict[str, dict[str, str]] = {
    # the module users import → {name: the module that defines it now (`module:name` when renamed)}
    "agentcell.events": dict.fromkeys(EVENTS, "agentcell.events.run"),
    "agentcell.incremental": {
        "SlotStreamStart": "agentcell.events.run:SlotStarted", "TokenDelta": "agentcell.events.run",
        "ToolStarted": "agentcell.events.run", "ALIASES": "agentcell.events.aliases",
        "stop_when_set": "agentcell.incremental",
    },
    "agentcell.errors": {"AgentcellError": "agentcell.errors", "TemplateSyntaxError": "agentcell.errors"},
    "agentcell.tools": {"tool": "agentcell.tools", "readonly": "agentcell.tools"},
    "agentcell.options": {"RunOptions": "agentcell.options", "Compaction": "agentcell.options"},
    "agentcell.result": {"RunResult": "agentcell.result"},
    "agentcell.template": {"compile_template": "agentcell.template", "CompiledTemplate": "agentcell.template.template"},
    "agentcell.engine": {"stream": "agentcell.engine", "start_run": "agentcell.engine", "Run": "agentcell.engine.runner"},
    "agentcell.batch": {"map": "agentcell.batch", "Batch": "agentcell.batch.runner"},
    "agentcell.journal": {"load": "agentcell.journal.reader"},
    "agentcell.providers": {
        "openai_compatible": "agentcell.providers.compat", "replay": "agentcell.providers.cassette",
        "RetryPolicy": "agentcell.providers.retry",
    },
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_an_old_import_path_gives_the_object_its_new_home_defines(path: str) -> None:
    module = importlib.import_module(path)
    for name, home in PATHS[path].items():
        where, _, defined = home.partition(":")
        assert getattr(module, name) is getattr(importlib.import_module(where), defined or name), f"{path}.{name}"


def test_the_facade_resolves_every_name_from_where_it_lives_now() -> None:
    import agentcell

    for name, home in agentcell._EXPORTS.items():
        assert getattr(agentcell, name) is getattr(importlib.import_module(home), name), name
