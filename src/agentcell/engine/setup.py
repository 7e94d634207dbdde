"""From a template and its `RunOptions` to a started `Run`: the checks, then each segment's state.

`start(template, options)` checks everything that can be checked before any model call (template,
context, tools, model), keeps it as the run's `_Setup`, and launches the first segment; `Run.resume()`
launches the next one from the same setup. `start_run(template, **options)` is the keyword front.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, Unpack

from pydantic_ai.messages import ModelMessage
from pydantic_ai.usage import UsageLimits

from ..errors import AgentcellError
from ..events import RunStatus
from ..journal import Journal, JournalOption, check_run_id, journal_path, prune_default
from ..mcp_servers.group import grouped
from ..options import RunOptions, RunOptionsKwargs, option_keywords, options_for
from ..providers.faults import FaultBook, parse_faults, with_faults
from ..providers.models import ResolvedModel, resolve_model
from ..result import RunResult
from ..template.program import Template
from ..transcript import Transcript
from .agents import SlotAgents
from .budget import ceiling_from
from .compaction import ContextKeeper
from .context import window_for, window_known
from .eventlog import EventLog
from .execute import Executor, ResumePoint
from .fork import ForkPlan, remember, retag
from .guard import Guards
from .lesson import LessonControls
from .output_modes import ServerFacts
from .runner import Run
from .sink import Sink
from .state import RunState, UsageBook
from .temporal import reference_time
from .toolbox import ToolRegistry, build_registry, check_toolsets

RESUMABLE: frozenset[RunStatus] = frozenset({"stopped", "failed", "budget_exhausted"})


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
    window: tuple[int, bool] = (0, False)
    """The model's context window and whether it is known rather than assumed (`context.py`), looked up
    once for every run of this setup."""
    ceiling: UsageLimits = field(default_factory=UsageLimits)
    """`options.limits` with the defaults filled in (`budget.ceiling_from`), once for every run (read-only)."""

    def with_context(self, context: Mapping[str, Any]) -> _Setup:
        """This setup with a run's own `context` (a batch row's): `dataclasses.replace` without its checks per
        field and keyword call, once per row."""
        new = object.__new__(_Setup)
        for member in _MEMBERS:
            member.__set__(new, member.__get__(self))
        _CONTEXT.__set__(new, dict(context))
        return new


_MEMBERS: tuple[Any, ...] = tuple(_Setup.__dict__[f.name] for f in fields(_Setup))
"""Each field's slot of `_Setup` (`with_context` copies through them)."""
_CONTEXT: Any = _Setup.__dict__["context"]


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
    running_loop_needed()
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
    parse_faults(options.inject)  # a bad --inject fails now, before any model call
    resolved = resolve_model(options.model)
    setup = _Setup(
        template=compiled,
        context=dict(options.context or {}),
        model=resolved,
        registry=registry,
        history=tuple(history or ()),
        options=options,
        window=_window(resolved, options.context_window),
        ceiling=ceiling_from(options.limits),
        notes=tuple(
            f"tool {s['name']!r} has no docstring, so the model gets no description of what it does or when to "
            "call it; add one (its first line is what the model reads)"
            for s in registry.schemas() if not str(s.get("description") or "").strip()
        ),
    )
    compaction = options.compaction
    if compaction is not None and compaction.model is not None:
        resolve_model(compaction.model)  # a bad summarizer fails now, not at the first compaction
    if options.describe_media is not None:
        resolve_model(options.describe_media)  # a bad describer too, not at the first image
    return Prepared(setup)


class Prepared:
    """A template with its options, checked and resolved once (`prepare`); each `start` is one run of it."""

    __slots__ = ("_setup",)

    @property
    def setup(self) -> _Setup:
        """What every run started from here shares."""
        return self._setup

    def __init__(self, setup: _Setup) -> None:
        self._setup = setup

    def start(self, *, context: Mapping[str, Any] | None = None, run_id: str | None = None) -> Run:
        """Start one run on the running loop: with the prepared options' context and run id, or these.

        Raises: `UndefinedVariableError` (the template reads a variable the context lacks), `AgentcellError`
        (no running loop, a run id that cannot name a journal file).
        """
        running_loop_needed()
        setup = self._setup if context is None else self._setup.with_context(context)
        setup.template.check_context(setup.context)
        options = setup.options
        resume_from = options.resume_from
        rid = run_id or options.run_id or (resume_from.run_id if resume_from is not None else uuid.uuid4().hex[:12])
        check_run_id(rid)  # it names the journal file: no '../', no separators
        return _launch(setup, rid, resume=resume_from)


def running_loop_needed() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise AgentcellError("start_run() needs a running event loop; use complete() from sync code") from None


def launch_fork(setup: _Setup, run_id: str, plan: ForkPlan) -> Run:
    return _launch(setup, run_id, resume=None, fork=plan)  # `forking.py` has checked everything


def _launch(
    setup: _Setup,
    run_id: str,
    *,
    resume: RunResult | None,
    transcript: Transcript | None = None,
    fork: ForkPlan | None = None,
) -> Run:
    """Start one segment of a run: the first, or the next one after `resume`; or a fork's first."""
    if resume is not None and resume.status not in RESUMABLE:
        raise AgentcellError(
            f"run {run_id} ended {resume.status!r}; only a stopped, failed or out-of-budget run can be resumed"
        )
    segment = 1 if resume is None else resume.segment + 1
    log = EventLog(transcript)
    sink = Sink(log, run_id)
    notes = list(setup.notes)
    sink.journal = _open_journal(run_id, setup.options.journal, segment, notes)
    setup = replace(setup, notes=tuple(notes)) if len(notes) > len(setup.notes) else setup  # a journal's note
    options = setup.options
    state = RunState(
        run_id=run_id,
        emit=sink.emit,
        emit_text=sink.text.add,
        coalescer=sink.text,
        model=setup.model,
        ceiling=setup.ceiling,
        registry=setup.registry,
        toolsets=grouped(options.toolsets),  # two MCP servers' clashing tool names prefixed
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
        describe_media=_describer(setup.options),
        cost_limit=options.cost_limit,
        spent=(resume.usage.cost or 0.0) if resume is not None else 0.0,
        server=setup.server,
    )
    _lesson_mode(state, options)
    sink.state = state
    point = fork.resume if fork is not None else None if resume is None else ResumePoint(
        results=resume.results, slot_messages=resume.slot_messages)
    executor = Executor(state, setup.template, setup.context, setup.history, resume=point)
    remember(run_id, setup, log, segment=segment)

    def relaunch(ending: RunResult, transcript: Transcript) -> Run:
        return _launch(setup, run_id, resume=ending, transcript=transcript)

    return Run(
        state, executor, setup.template, log, relaunch=relaunch, notes=setup.notes, resumed_from=resume,
        prelude=() if fork is None else tuple(retag(e, run_id) for e in fork.prelude),
        forked=None if fork is None else replace(fork.marker, run_id=run_id),
    )


def _lesson_mode(state: RunState, options: RunOptions) -> None:
    """Step pauses, predictions and injected faults, when the options ask for any (`lesson.py`, `faults.py`)."""
    faults = parse_faults(options.inject)
    if not (options.step or options.predict or faults):
        return
    book = FaultBook(faults) if faults else None
    state.lesson = LessonControls(run_id=state.run_id, emit=state.emit, step=options.step,
                                  predict=options.predict, faults=book)
    if book is not None:
        state.model = replace(state.model, model=with_faults(state.model.model, book))


def _reference(now: datetime | None, resume: RunResult | None) -> datetime:
    """The run's reference time: `now=`, else a resumed run's own, else the clock now."""
    if now is None and resume is not None and resume.reference_time is not None:
        return datetime.fromisoformat(resume.reference_time)
    return reference_time(now)


def _keeper(setup: _Setup) -> ContextKeeper:
    compaction = setup.options.compaction
    writer = None if compaction is None or compaction.model is None else resolve_model(compaction.model).model
    window, known = setup.window
    return ContextKeeper(window=window, compaction=compaction, summarizer=writer, window_known=known)


def _window(model: ResolvedModel, override: int | None) -> tuple[int, bool]:
    return (window_for(model.name, override=override, offline=model.offline),
            window_known(model.name, override=override, offline=model.offline))


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


def _compile(template: Template | str) -> Template:
    if not isinstance(template, str):
        return template
    from ..template import compile_template  # late: only string templates need the compiler (and jinja2)

    return compile_template(template)


def _describer(options: RunOptions) -> Any:
    """The `describe_media` model, resolved (`None`: prompts a model cannot read are refused)."""
    return None if options.describe_media is None else resolve_model(options.describe_media).model
