"""Record and replay: a run's model responses in a versioned, human-readable JSON cassette.

`RecordingModel` (built by `agentcell.record(path, model)`, which lives in `models.py` beside
`resolve_model`) wraps a model so that every successful response of the run is written to `path`
(rewritten after each response, so a stopped run still leaves a usable cassette), together with what
each request carried that the run itself produced: the slot's prompt and the tool results (and
validation retry prompts) sent back to the model. `replay(path)` is a model that answers from the
cassette with no network, streaming text and thinking word by word at `delay` seconds per word.

What counts as "the same request" on replay: the same slot asking for its n-th response, with the same
new input — the prompt text, and each tool result / retry prompt by tool name and content (with
`match="loose"`, by tool name only, for tools whose output varies between runs). Timestamps, ids,
instructions and settings are not compared. The first difference raises `ReplayDivergence` naming the
slot, the request number and the field that differs.

Cassette format (version 1)::

    {"agentcell_cassette": 1, "model": "openai-compat:qwen3@http://…/v1", "recorded_at": "…",
     "interactions": [{"slot": "answer", "request": 1,
                       "sent": [{"kind": "prompt", "content": "Who leads PSYC605?"}],
                       "response": {…pydantic-ai ModelResponse as JSON…}}, …]}
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.settings import ModelSettings

from ..errors import ModelConfigError, ReplayDivergence
from ..formats.media_refs import is_media_item, media_key
from .around import AroundModel
from .hooks import current_scope

CASSETTE_VERSION = 1
NO_SLOT = "_"
Match = Literal["strict", "loose"]


@dataclass(slots=True, kw_only=True)
class Interaction:
    """One model response and the new input of the request it answered."""

    slot: str
    request: int
    """1-based number of this request within its slot."""
    sent: list[dict[str, str]]
    response: ModelResponse

    def to_json(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "request": self.request,
            "sent": self.sent,
            "response": ModelMessagesTypeAdapter.dump_python([self.response], mode="json")[0],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Interaction:
        response = ModelMessagesTypeAdapter.validate_python([data["response"]])[0]
        assert isinstance(response, ModelResponse)
        return cls(slot=data["slot"], request=int(data["request"]), sent=list(data["sent"]), response=response)


@dataclass(slots=True, kw_only=True)
class Cassette:
    """The recorded responses of a run, in the order they arrived."""

    model: str
    interactions: list[Interaction] = field(default_factory=list)
    recorded_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def to_json(self) -> dict[str, Any]:
        return {
            "agentcell_cassette": CASSETTE_VERSION,
            "model": self.model,
            "recorded_at": self.recorded_at,
            "interactions": [i.to_json() for i in self.interactions],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the cassette atomically (a reader never sees half a file)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n"
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Cassette:
        """Read a cassette; `ModelConfigError` when the file is missing, unreadable or of another version."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ModelConfigError(f"no cassette at {str(path)!r} (record one with --record {path})") from None
        except (OSError, ValueError) as exc:
            raise ModelConfigError(f"cannot read cassette {str(path)!r}: {exc}") from None
        version = data.get("agentcell_cassette") if isinstance(data, dict) else None
        if version != CASSETTE_VERSION:
            raise ModelConfigError(
                f"{str(path)!r} is not an agentcell cassette of version {CASSETTE_VERSION} (found {version!r})"
            )
        try:
            interactions = [Interaction.from_json(item) for item in data.get("interactions", [])]
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelConfigError(f"cassette {str(path)!r} is damaged: {exc}") from None
        return cls(model=str(data.get("model", "")), interactions=interactions, recorded_at=data.get("recorded_at", ""))


def sent_parts(messages: list[ModelMessage]) -> list[dict[str, str]]:
    """The new input of a request: its last `ModelRequest`'s prompt, tool results and retry prompts."""
    last = next((m for m in reversed(messages) if isinstance(m, ModelRequest)), None)
    out: list[dict[str, str]] = []
    for part in last.parts if last is not None else ():
        if isinstance(part, UserPromptPart):
            # An image is named by its digest (the cassette stays small and replay compares the same image).
            text = part.content if isinstance(part.content, str) else json.dumps(
                [c if isinstance(c, str) else media_key(c) if is_media_item(c) else str(c) for c in part.content])
            out.append({"kind": "prompt", "content": text})
        elif isinstance(part, ToolReturnPart):
            out.append({"kind": "tool_return", "tool": part.tool_name, "content": part.model_response_str()})
        elif isinstance(part, RetryPromptPart):
            out.append({"kind": "retry", "tool": part.tool_name or "", "content": part.model_response()})
    return out


class RecordingModel(AroundModel[None]):
    """Pass requests to the wrapped model and write each successful response to a cassette."""

    def __init__(self, wrapped: Model, path: str | os.PathLike[str], *, name: str | None = None) -> None:
        super().__init__(wrapped)
        self.path = Path(path).expanduser()
        self.cassette = Cassette(model=name or f"{wrapped.system}:{wrapped.model_name}")
        self._counts: dict[str, int] = {}

    async def _before(self, *, streamed: bool) -> None:
        return None

    def _answered(self, messages: list[ModelMessage], response: ModelResponse) -> None:
        """Record the response (a stream's only once it has streamed to its end)."""
        slot = current_scope().slot or NO_SLOT
        self._counts[slot] = self._counts.get(slot, 0) + 1
        self.cassette.interactions.append(
            Interaction(slot=slot, request=self._counts[slot], sent=sent_parts(messages), response=response)
        )
        self.cassette.save(self.path)


class ReplayModel(Model):
    """Answer every request from a cassette, without a network, at a readable streaming pace."""

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        delay: float = 0.03,
        match: Match = "strict",
    ) -> None:
        super().__init__()
        self.source = cassette if isinstance(cassette, Cassette) else None
        self.path = None if isinstance(cassette, Cassette) else Path(cassette).expanduser()
        self.cassette = cassette if isinstance(cassette, Cassette) else Cassette.load(self.path or "")
        self.delay = delay
        self.match: Match = match
        self._cursor: dict[str, int] = {}

    @property
    def model_name(self) -> str:
        return self.cassette.model or "cassette"

    @property
    def system(self) -> str:
        return "replay"

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        return self._take(messages).response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        interaction = self._take(messages)
        yield ReplayStreamedResponse(
            model_request_parameters=model_request_parameters, recorded=interaction.response, delay=self.delay
        )

    def _take(self, messages: list[ModelMessage]) -> Interaction:
        slot = current_scope().slot or NO_SLOT
        number = self._cursor.get(slot, 0) + 1
        recorded = [i for i in self.cassette.interactions if i.slot == slot]
        where = f"replay of {self._label()} diverged at slot {slot!r}, request {number}"
        if number > len(recorded):
            raise ReplayDivergence(f"{where}: the cassette holds only {len(recorded)} request(s) for that slot")
        interaction = recorded[number - 1]
        difference = _difference(interaction.sent, sent_parts(messages), self.match)
        if difference:
            raise ReplayDivergence(f"{where}: {difference}")
        self._cursor[slot] = number
        return interaction

    def _label(self) -> str:
        return repr(str(self.path)) if self.path is not None else "the cassette"


def _difference(recorded: list[dict[str, str]], now: list[dict[str, str]], match: Match) -> str | None:
    keys = ("kind", "tool") if match == "loose" else ("kind", "tool", "content")
    for index, (old, new) in enumerate(zip(recorded, now, strict=False)):
        for key in keys:
            if old.get(key) != new.get(key):
                what = f"{old.get('kind')} #{index + 1}" + (f" (tool `{old['tool']}`)" if old.get("tool") else "")
                return f"{what} {key} was {_short(old.get(key))} when recorded, now {_short(new.get(key))}"
    if len(recorded) != len(now):
        return f"the request carried {len(now)} new part(s), the recording {len(recorded)}"
    return None


def _short(value: str | None, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pieces(text: str) -> list[str]:
    """Split text into word-sized pieces that join back exactly."""
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + ([words[-1]] if words[-1] else [])


@dataclass
class ReplayStreamedResponse(StreamedResponse):
    """A recorded response streamed again: text and thinking word by word, tool calls whole."""

    recorded: ModelResponse = field(default_factory=lambda: ModelResponse(parts=[]))
    delay: float = 0.0
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        for index, part in enumerate(self.recorded.parts):
            if isinstance(part, TextPart | ThinkingPart):
                for piece in _pieces(part.content):
                    if self.delay > 0:
                        await asyncio.sleep(self.delay)
                    if isinstance(part, TextPart):
                        events = manager.handle_text_delta(vendor_part_id=index, content=piece)
                    else:
                        events = manager.handle_thinking_delta(
                            vendor_part_id=index, content=piece, id=part.id, provider_name=part.provider_name
                        )
                    for event in events:
                        yield event
                if isinstance(part, ThinkingPart) and part.signature:
                    for event in manager.handle_thinking_delta(vendor_part_id=index, signature=part.signature):
                        yield event
            elif isinstance(part, ToolCallPart):
                for event in manager.handle_tool_call_delta_events(
                    vendor_part_id=index,
                    tool_name=part.tool_name,
                    args=part.args_as_json_str(),
                    tool_call_id=part.tool_call_id,
                ):
                    yield event
            else:
                yield manager.handle_part(vendor_part_id=index, part=part)
        self._add_usage(self.recorded.usage, reported=True, cumulative=True)
        self.finish_reason = self.recorded.finish_reason
        self.provider_response_id = self.recorded.provider_response_id

    async def close_stream(self) -> None:
        pass

    @property
    def model_name(self) -> str:
        return self.recorded.model_name or "replay"

    @property
    def provider_name(self) -> str | None:
        return self.recorded.provider_name

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


REPLAY_DELAY_VAR = "AGENTCELL_REPLAY_DELAY"
DEFAULT_REPLAY_DELAY = 0.03


def replay(path: str | os.PathLike[str], *, delay: float | None = None, match: Match = "strict") -> ReplayModel:
    """A model that answers from the cassette at `path` with no network.

    `delay`: seconds per streamed word; by default `$AGENTCELL_REPLAY_DELAY`, else 0.03 (a brisk reader's pace).
    """
    if delay is None:
        try:
            delay = float(os.environ.get(REPLAY_DELAY_VAR, DEFAULT_REPLAY_DELAY))
        except ValueError:
            raise ModelConfigError(f"{REPLAY_DELAY_VAR} must be a number of seconds per word") from None
    return ReplayModel(path, delay=delay, match=match)
