"""From a template and its `RunOptions` to a started `Run`: the checks, then each segment's state.

`start(template, options)` checks everything that can be checked before any model call (template,
context, tools, model), keeps it as the run's `_Setup`, and launches the first segment; `Run.resume()`
launches the next one from the same setup. `start_run(template, **options)` is the keyword front.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Unpack

from pydantic_ai.messages import ModelMessage

from ..errors import AgentcellError
from ..events import Event, ProcessingComplete, RunStatus, RunWarning, ThinkingDelta, TokenDelta
from ..events.json import Converted, scrub_event, wire_fields
from ..journal import Journal, JournalOption, check_run_id, journal_path, prune_default
from ..options import RunOptions, RunOptionsKwargs, option_keywords, options_for
from ..providers.known_secrets import KnownSecrets
from ..providers.models import ResolvedModel, resolve_model
from ..result import RunResult
from ..template.program import Template
from ..transcript import Transcript
from .agents import SlotAgents
from .budget import ceiling_from
from .coalesce import TextCoalescer
from .compaction import ContextKeeper
from .context import window_for
from .eventlog import EventLog
from .execute import Executor, ResumePoint
from .guard import Guards
from .output_modes import ServerFacts
from .runner import Run
from .state import RunState, UsageBook
from .temporal import reference_time
from .toolbox import ToolRegistry, build_registry, check_toolsets

RESUMABLE: frozenset[RunStatus] = frozenset({"stopped", "failed", "budget_exhausted"})
SCRUB_WARNINGS = 3
"""At most this many warnings per run about replaced lone surrogates."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Setup:
    """Everything a run's segments share (checked once, reused by `Run.resume()`)."""

    template: Template
    """The compiled template."""
    context: Mapping[str, Any]
    """The template's variables, checked against it."""
    model: ResolvedModel
    registry: ToolRegistry
    history: tuple[ModelMessage, ...]
    """The conversation the run continues (`history=`, or a resumed run's own)."""
    options: RunOptions
    """The options as given (the fields above are their checked, resolved forms)."""
    notes: tuple[str, ...] = ()
    """Warnings found while setting up (shown at the start of each segment)."""
    agents: SlotAgents = field(default_factory=SlotAgents)
    """The slots' pydantic-ai agents, built once per slot shape for every run started from this setup."""
    server: ServerFacts = field(default_factory=ServerFacts)
    """What runs of this setup learned about their servers (a batch's rows share it: the first row's fallback
    spares the others the request that found it)."""


@option_keywords
def start_run(template: Template | str, **options: Unpack[RunOptionsKwargs]) -> Run:
    """Check everything that can be checked, then start the run as a task on the running loop.

    The keywords are `RunOptions`' fields (see there for each). Long-run options: `context_window`
    overrides the model's known window for the gauge and compaction; `compaction=None` turns
    compaction and tool-result cutting off; `journal` is `None` (the default journal), `False`, `True`
    or a folder/`.jsonl` path; `resume_from` goes on with a stopped run's `RunResult` as its next
    segment (same template and context expected), like `Run.resume()`. `tools` may mix callables,
    `pydantic_ai.Tool` objects and OpenAI-style declarations (`{"type": "function", "function": {...}}`)
    whose functions `dispatch` maps by name.

    Raises (before any model call): `TemplateSyntaxError`/`UndefinedVariableError`,
    `ToolDefinitionError`, `ModelConfigError`, or `AgentcellError` when no event loop is running;
    `TypeError` for a keyword that is not an option.
    """
    return start(template, options_for(start_run, options))


def start(template: Template | str, options: RunOptions) -> Run:
    """`start_run` with its options as one value (what every surface calls)."""
    _running_loop()
    return prepare(template, options).start()


def prepare(template: Template | str, options: RunOptions) -> Prepared:
    """Check and resolve what every run of `template` with `options` shares (template, tools, model), once.

    A batch prepares once and starts each row from it (`Prepared.start(context=...)`), so its rows share
    the compiled template, the built tools and the slots' pydantic-ai agents (`agents.py`).

    Raises (before any model call): `TemplateSyntaxError`, `ToolDefinitionError`, `ModelConfigError`,
    `AgentcellError` for `history=` with `resume_from=`.
    """
    compiled = _compile(template)
    resume_from, history = options.resume_from, options.history
    if resume_from is not None and history is not None:
        raise AgentcellError("pass history= or resume_from=, not both (a resumed run keeps its own history)")
    if resume_from is not None:
        history = resume_from.messages[: resume_from.history_length]
    registry = build_registry(options.tools, dispatch=options.dispatch, approve_writes=options.approve_writes)
    check_toolsets(options.toolsets)
    setup = _Setup(
        template=compiled,
        context=dict(options.context or {}),
        model=resolve_model(options.model),
        registry=registry,
        history=tuple(history or ()),
        options=options,
        notes=tuple(
            f"tool {s['name']!r} has no docstring, so the model gets no description of what it does or when to "
            "call it; add one (its first line is what the model reads)"
            for s in registry.schemas() if not str(s.get("description") or "").strip()
        ),
    )
    compaction = options.compaction
    if compaction is not None and compaction.model is not None:
        resolve_model(compaction.model)  # a bad summarizer fails now, not at the first compaction
    return Prepared(setup)


class Prepared:
    """A template with its options, checked and resolved once (`prepare`); each `start` is one run of it."""

    __slots__ = ("_setup",)

    def __init__(self, setup: _Setup) -> None:
        self._setup = setup

    def start(self, *, context: Mapping[str, Any] | None = None, run_id: str | None = None) -> Run:
        """Start one run on the running loop: with the prepared options' context and run id, or these.

        Raises: `UndefinedVariableError` (the template reads a variable the context lacks), `AgentcellError`
        (no running loop, a run id that cannot name a journal file).
        """
        _running_loop()
        setup = self._setup if context is None else replace(self._setup, context=dict(context))
        setup.template.check_context(setup.context)
        options = setup.options
        resume_from = options.resume_from
        rid = run_id or options.run_id or (resume_from.run_id if resume_from is not None else uuid.uuid4().hex[:12])
        check_run_id(rid)  # it names the journal file: no '../', no separators
        return _launch(setup, rid, resume=resume_from)


def _running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise AgentcellError("start_run() needs a running event loop; use complete() from sync code") from None


def _launch(setup: _Setup, run_id: str, *, resume: RunResult | None, transcript: Transcript | None = None) -> Run:
    """Start one segment of a run: the first, or the next one after `resume`."""
    if resume is not None and resume.status not in RESUMABLE:
        raise AgentcellError(
            f"run {run_id} ended {resume.status!r}; only a stopped, failed or out-of-budget run can be resumed"
        )
    segment = 1 if resume is None else resume.segment + 1
    log = EventLog(transcript)
    sink = _Sink(log, run_id)
    notes = list(setup.notes)
    sink.journal = _open_journal(run_id, setup.options.journal, segment, notes)
    setup = replace(setup, notes=tuple(notes))
    options = setup.options
    state = RunState(
        run_id=run_id,
        emit=sink.emit,
        emit_text=sink.text.add,
        coalescer=sink.text,
        model=setup.model,
        ceiling=ceiling_from(options.limits),
        registry=setup.registry,
        toolsets=tuple(options.toolsets),
        approve_writes=options.approve_writes,
        output_mode=options.output_mode,
        guards=Guards(run_id, sink.emit),
        usage=UsageBook(run_id, sink.emit, base=None if resume is None else resume.usage),
        deps=options.deps,
        deps_type=options.deps_type,
        approve=options.approve,
        context=_keeper(setup),
        journal=sink.journal,
        reference_time=_reference(options.now, resume),
        agents=setup.agents,
        server=setup.server,
    )
    sink.state = state
    point = None if resume is None else ResumePoint(results=resume.results, slot_messages=resume.slot_messages)
    executor = Executor(state, setup.template, setup.context, setup.history, resume=point)

    def relaunch(ending: RunResult, transcript: Transcript) -> Run:
        return _launch(setup, run_id, resume=ending, transcript=transcript)

    return Run(state, executor, setup.template, log, relaunch=relaunch, notes=setup.notes, resumed_from=resume)


def _reference(now: datetime | None, resume: RunResult | None) -> datetime:
    """The run's reference time: `now=`, else a resumed run's own, else the clock now."""
    if now is None and resume is not None and resume.reference_time is not None:
        return datetime.fromisoformat(resume.reference_time)
    return reference_time(now)


def _keeper(setup: _Setup) -> ContextKeeper:
    compaction = setup.options.compaction
    writer = None if compaction is None or compaction.model is None else resolve_model(compaction.model).model
    window = window_for(setup.model.name, override=setup.options.context_window, offline=setup.model.offline)
    return ContextKeeper(window=window, compaction=compaction, summarizer=writer)


def _open_journal(run_id: str, option: JournalOption, segment: int, notes: list[str]) -> Journal | None:
    path = journal_path(run_id, option)
    if path is None:
        return None
    if segment == 1:
        prune_default(path, run_id=run_id)  # the default folder keeps the newest runs only (journal/store.py)
    try:
        return Journal(path, segment=segment)
    except OSError as exc:  # a read-only home must not stop the run; say so instead
        notes.append(f"the journal could not be opened ({exc}); this run is not journaled")
        return None


class _Sink:
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
        if isinstance(event, TokenDelta | ThinkingDelta):
            if not (event.text.isascii() and event.slot.isascii()):  # one per streamed batch: ASCII is clean
                event, replaced = scrub_event(event)
        else:
            # The event's wire conversion, made once here and handed on: it checks the text (every view, the
            # journal and the saved notebook need valid UTF-8), the log keeps it for the views and the transcript,
            # and the journal learns from it whether the row holds a long string.
            converted = wire_fields(event)
            if not converted[1]:
                event, replaced = scrub_event(event)
                converted = wire_fields(event)
        self._log.append(event, converted)
        if replaced:
            self._report_scrubbed(event, replaced)
        journal = self.journal
        if journal is not None:
            # never raises: a full disk, the size cap… stop it and say why
            journal.event(event, long_free=None if converted is None else converted[2])
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


def _compile(template: Template | str) -> Template:
    if not isinstance(template, str):
        return template
    from ..template import compile_template  # late: only string templates need the compiler (and jinja2)

    return compile_template(template)
