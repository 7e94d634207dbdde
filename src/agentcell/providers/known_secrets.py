"""The credentials a run was given, masked wherever the run's own text is kept (a model repeating its key).

A server (or a model told its key) may put the run's API key in the answer. The wire view masks it
(`wire_capture.py`), but the answer, its streamed deltas, the messages, the journal, the static view and
the lesson keep the model's text as it came. `model_secrets(model)` reads what the model was given: its
client's API key, the password in its base URL, the values of its client's credential headers. A run's
`KnownSecrets` collects them (`add`, once per slot model) and masks them:

* in whole texts and values (`mask`, `mask_value`): an answer, a stopped slot's partial text, a response's parts;
* in a stream (`tail`): a key split across deltas is caught by holding back the end of a delta that
  could begin a key until the next delta says whether it does (`engine/setup.py`'s sink).

Only exact values are masked here, not key-shaped text: a model explaining "Bearer tokens" or quoting an
example `sk-…` key is left alone, and well-known placeholder keys (`ollama`, `lm-studio`, …) and short
values are never treated as secrets (masking every "ollama" in an answer would garble it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import TextPart, ThinkingPart, ToolCallPart

from .secrets import MASK, url_secrets

MIN_LENGTH = 8
"""A value shorter than this is not masked in the run's text (it would match ordinary words)."""
PLACEHOLDERS = frozenset({
    "ollama", "lm-studio", "lmstudio", "not-needed", "api-key-not-set", "empty", "none", "dummy", "test",
    "sk-no-key-required", "no-key", "nokey", "placeholder", "changeme", "anything", "fake-key", "not-used",
})
"""Keys local servers accept as "no key" (compared lower case): never secrets."""
SECRET_HEADER = re.compile(
    r"auth|key|token|secret|passw|session|cookie|credential|signature|organi[sz]ation|project", re.IGNORECASE
)
"""A header whose name matches carries a credential (`Authorization`, `Helicone-Auth`, `X-Litellm-Api-Key`,
`OpenAI-Organization`, `Set-Cookie`, …): gateways and proxies name their credentials freely."""
NOT_SECRET_HEADER = re.compile(r"rate-?limit", re.IGNORECASE)
"""…except rate-limit counters (`x-ratelimit-remaining-tokens`): numbers a lesson is about."""


def secret_header(name: str) -> bool:
    """Whether a header named `name` carries a credential (its value is never shown)."""
    return bool(SECRET_HEADER.search(name)) and not NOT_SECRET_HEADER.search(name)


def _client_secrets(client: Any) -> list[str]:
    out: list[str] = []
    for attribute in ("api_key", "auth_token"):  # Anthropic's SDK keeps a bearer token beside the key
        key = getattr(client, attribute, None)
        if isinstance(key, str):
            out.append(key)
    base = getattr(client, "base_url", None)
    if base is not None:
        out += url_secrets(str(base))
    headers = getattr(client, "_custom_headers", None)  # the OpenAI/Anthropic SDKs' `default_headers=`
    if isinstance(headers, dict):
        for name, value in headers.items():
            if isinstance(name, str) and isinstance(value, str) and secret_header(name):
                out += [value, value.partition(" ")[2]]
    return out


def model_secrets(model: Any) -> list[str]:
    """The credentials `model` (and the models it wraps) was given: API keys, URL passwords, credential headers."""
    out: list[str] = []
    for _ in range(8):
        if model is None:
            break
        client = getattr(model, "client", None)
        if client is not None:
            out += _client_secrets(client)
        base = getattr(model, "base_url", None)
        if isinstance(base, str):
            out += url_secrets(base)
        model = getattr(model, "wrapped", None)
    return out


class KnownSecrets:
    """The credentials of one run's models, masked in the run's text (see the module docstring)."""

    __slots__ = ("_values",)

    def __init__(self, values: list[str] | None = None) -> None:
        self._values: tuple[str, ...] = ()
        self.add(values or [])

    def add(self, values: list[str]) -> None:
        """Know `values` too (short values and placeholder keys are skipped)."""
        new = {v for v in values if len(v) >= MIN_LENGTH and v.lower() not in PLACEHOLDERS} - set(self._values)
        if new:
            self._values = tuple(sorted({*self._values, *new}, key=len, reverse=True))  # longest first

    def __bool__(self) -> bool:
        return bool(self._values)

    def mask(self, text: str) -> str:
        """`text` with every known credential replaced by `***`."""
        for value in self._values:
            if value in text:
                text = text.replace(value, MASK)
        return text

    def mask_value(self, value: Any) -> Any:
        """JSON-shaped `value` (str, dict, list, tuple) with every string masked; rebuilt only where it changed."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            out = {k: self.mask_value(v) for k, v in value.items()}
            return value if all(out[k] is v for k, v in value.items()) else out
        if isinstance(value, list | tuple):
            items = [self.mask_value(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return items if isinstance(value, list) else tuple(items)
        return value

    def tail(self, text: str) -> int:
        """How many characters at the end of `text` could begin a credential (to hold back until more text
        arrives): the longest suffix that is a proper prefix of a known value; 0 when none."""
        best = 0
        for value in self._values:
            first = value[0]
            start = max(0, len(text) - len(value) + 1)
            at = text.find(first, start)
            while at != -1:
                if value.startswith(text[at:]):
                    best = max(best, len(text) - at)
                    break  # the earliest match is the longest for this value
                at = text.find(first, at + 1)
        return best

    def mask_parts(self, parts: Sequence[Any]) -> None:
        """Mask a model response's parts in place: its text, thinking and tool-call arguments.

        In place, because the response's parts are the objects pydantic-ai keeps in the run's history and
        makes the output from; masked before that, every later reader (the answer, the journal, the next
        request) sees the masked text.
        """
        if not self._values:
            return
        for part in parts:
            if isinstance(part, TextPart | ThinkingPart):
                part.content = self.mask(part.content)
            elif isinstance(part, ToolCallPart):
                part.args = self.mask_value(part.args)
