"""Where a run's every event goes: its log (for the views), then its journal, after two passes of its own.

Streamed text is merged (`coalesce.py`) and a delta's end that could begin one of the run's credentials is
held back until the next piece shows it is not one; an event that cannot be written as JSON is scrubbed once,
with a warning (at most `SCRUB_WARNINGS` per run). Nothing follows a run's one ending.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from dataclasses import replace

from ..events import (
    Event,
    ModelRequestSent,
    ModelResponseReceived,
    ProcessingComplete,
    RunWarning,
    ThinkingDelta,
    TokenDelta,
)
from ..events.json import Converted, scrub_event, wire_json
from ..formats.jsonsafe import check_json_dump, jsonable
from ..journal import Journal
from ..providers.known_secrets import KnownSecrets
from .coalesce import TextCoalescer
from .eventlog import EventLog
from .state import RunState

SCRUB_WARNINGS = 3
"""At most this many warnings per run about replaced lone surrogates."""


_JSON_PAYLOADS: dict[type[Event], tuple[tuple[str, bool], ...]] = {
    kind: tuple((f.name, f.name in payloads) for f in dataclass_fields(kind))
    for kind, payloads in ((ModelRequestSent, {"messages", "pydantic_ai"}), (ModelResponseReceived, {"parts"}))
}
"""Per teaching event type, its fields in order and whether each is a payload already made JSON (`requests.py`
builds them with `to_openai`, pydantic-ai's `mode="json"` dump and `to_jsonable_python`)."""


def _wire(event: Event) -> tuple[Converted, bytes | None]:
    """`wire_json(event)`, equal to it, without converting a teaching event's payloads again: their dicts are
    already JSON, so the wire fields share them (as lists, as the conversion makes them). Copied, they cost about
    a tenth of the engine's work per tool round and twice the memory until the run's end."""
    layout = _JSON_PAYLOADS.get(type(event))
    if layout is None:
        return wire_json(event)
    out = {name: list(value) if shared else jsonable(value)
           for name, shared in layout for value in (getattr(event, name),)}
    valid, long_free, dumped = check_json_dump(out)
    return (out, valid, long_free), dumped


class Sink:
    """Where every event goes: the run's log (for consumers), then the journal (if any).

    Streamed text is merged first (`text`, see `coalesce.py`): any other event emits the text
    gathered before it, so the order of events is kept.
    """

    def __init__(self, log: EventLog, run_id: str) -> None:
        self._log = log
        self._run_id = run_id
        self.journal: Journal | None = None
        self.state: RunState | None = None
        self._scrubbed = 0
        self._ended = False
        self._held: dict[tuple[str, str, int], TokenDelta | ThinkingDelta] = {}
        """Per stream (kind, slot, round): the end of its last delta, held back because it could begin one of
        the run's credentials (streams interleave: a guard's thinking beside a slot's answer)."""
        self.text = TextCoalescer(run_id, self._deliver)

    def emit(self, event: Event) -> None:
        if self._ended:
            return  # work abandoned at Stop may still report; nothing follows the run's one ending
        if isinstance(event, TokenDelta | ThinkingDelta) and event.run_id == self._run_id:
            self.text.add(type(event), event.slot, event.text, event.round)
            return
        if self.text.pending:
            self.text.flush()
        self._deliver(event)

    def _deliver(self, event: Event) -> None:
        secrets = None if self.state is None else self.state.secrets
        if secrets:  # the run's credentials never reach a store: masked here, a key split across deltas too
            if isinstance(event, TokenDelta | ThinkingDelta):
                masked = self._masked_delta(event, secrets)
                if masked is None:
                    return
                event = masked
            elif self._held:
                held, self._held = self._held, {}
                for delta in held.values():  # any other event: what was held is not the start of a key
                    self._put(delta)
        self._put(event)

    def _masked_delta(
        self, event: TokenDelta | ThinkingDelta, secrets: KnownSecrets
    ) -> TokenDelta | ThinkingDelta | None:
        """`event` with the run's credentials masked, after the text held back from the delta before it;
        its end held back in turn when it could begin a credential (`None`: all of it is held)."""
        stream = (event.kind, event.slot, event.round)
        held = self._held.pop(stream, None)
        masked = secrets.mask(event.text if held is None else held.text + event.text)
        keep = secrets.tail(masked)
        if keep:
            self._held[stream] = replace(event, text=masked[-keep:])
            masked = masked[:-keep]
        if not masked:
            return None
        return event if masked is event.text else replace(event, text=masked)

    def _put(self, event: Event) -> None:
        if self._ended:
            return
        self._ended = isinstance(event, ProcessingComplete)
        replaced = 0
        converted: Converted | None = None
        dumped: bytes | None = None
        if isinstance(event, TokenDelta | ThinkingDelta):
            if not (event.text.isascii() and event.slot.isascii()):  # one per streamed batch: ASCII is clean
                event, replaced = scrub_event(event)
        else:
            # The event's wire conversion, made once here and handed on: it checks the text (every view, the
            # journal and the saved notebook need valid UTF-8), the log keeps it for the views and the transcript,
            # and the journal writes the JSON the check made (or learns that the row holds a long string).
            converted, dumped = _wire(event)
            if not converted[1]:
                event, replaced = scrub_event(event)
                converted, dumped = wire_json(event)
        self._log.append(event, converted)
        if replaced:
            self._report_scrubbed(event, replaced)
        journal = self.journal
        if journal is not None:
            # never raises: a full disk, the size cap… stop it and say why
            journal.event(event, long_free=None if converted is None else converted[2], dumped=dumped)
            if journal.stopped is not None:
                self._detach_journal(journal.stopped, say=not self._ended)
        if self._ended:
            self._release()

    def _release(self) -> None:
        """At the run's end, drop the references that close cycles (the run's state holds `emit`, the
        coalescer `_deliver` and the slots' watchers), so the run's objects are freed when the last
        reference to them goes, not by a later pass of the cycle collector (a batch row left ~120 objects
        in cycles; bench/results/HISTORY-sessions-1-17.md §7d)."""
        self.state = None
        self.text.release()

    def _detach_journal(self, reason: str, *, say: bool) -> None:
        self.journal = None
        if self.state is not None:
            self.state.journal = None
        if not say:  # nothing may follow the run's ending
            return
        message = f"journaling stopped: {reason}"
        if self.state is not None:
            self.state.warn(None, message)
        else:
            self._log.append(RunWarning(run_id=self._run_id, slot=None, message=message))

    def _report_scrubbed(self, event: Event, replaced: int) -> None:
        self._scrubbed += 1
        if self._scrubbed > SCRUB_WARNINGS:
            return
        more = " (further replacements are not reported)" if self._scrubbed == SCRUB_WARNINGS else ""
        message = (
            f"{replaced} lone surrogate(s) (text that is not valid UTF-8) in a {event.kind} event "
            f"were replaced with U+FFFD{more}"
        )
        slot = getattr(event, "slot", None)
        if self.state is not None:
            self.state.warn(slot, message)  # kept in the result's warnings too
        else:
            self.emit(RunWarning(run_id=self._run_id, slot=slot, message=message))
