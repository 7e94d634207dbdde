"""The live widget: Python owns the run's state, the browser renders it.

Three coarse traits are synced (`status`, `final`, `hint`); everything else travels as batched
custom messages of wire events (`protocol.py`). The widget keeps no log of its own: it reads the
run's log (`engine/eventlog.py`, `follow`) with a cursor and converts what it sends when it sends it.
Sending is **leading-edge**: an event after a quiet `flush_interval` goes out at the loop's next
turn; events that come sooner wait for the interval to pass, so a burst of tokens costs one message
per interval, at most `1 / flush_interval` a second whatever the token rate. A view that opens late
asks for a snapshot (`snapshot_request`) and gets the whole run so far; once the run ends, `final`
holds the complete log, so a view rendered from a saved notebook (no kernel) shows the transcript too.

Display: `show()` (also what `display(widget)` and a cell's last expression call, through
`_ipython_display_`) puts out two adjacent outputs: the widget view, and a static twin (an empty
placeholder) that is updated in place when the run ends with the transcript as escaped HTML +
plain text (`render/html.py`) and provenance under `"agentcell"` in its metadata. JupyterLab cannot
render a widget without a kernel (jupyterlab_widgets 3.0 restores saved widget state only through a
kernel; it shows "Loading widget..." forever) and prefers the widget view over any fallback in the
same bundle, hence a separate output. CSS decides which of the two shows: the widget's stylesheet
hides the static twin next to a rendered view; the twin's own `<style>` hides an unrendered view.

Every custom message carries `t`, the kernel's clock (seconds since the widget started), so a view
that opens late shows the true elapsed time.

Front-end messages may arrive on a kernel *subshell thread* (JupyterLab >= 4.4 sends comms over
subshells on ipykernel 7.x), so the Stop handler only calls the thread-safe `on_stop` callback and
everything else is marshalled onto the loop captured at `bind()`.
"""

from __future__ import annotations

import asyncio
import contextvars
import pathlib
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ..._version import __version__
from ...engine.eventlog import EventLog
from ...events import Event, ProcessingComplete, RunStarted
from ...events.json import WireEvent, usage_json
from ...formats.jsonsafe import jsonable
from ...loops import running_loop
from .parent import parent_header, under_parent
from .protocol import FrontendMsg, Note, transcript_json, wire_events
from .saved_outputs import saved_outputs
from .shared_texts import pack, unpack
from .viewers import note_view

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
_SECRET_KEY = re.compile(r"key|token|secret|password|credential|auth", re.IGNORECASE)

STATIC = pathlib.Path(__file__).parents[2] / "static"
"""The built bundles (`npm run build` writes them; the wheel ships them)."""
_FALLBACK_ESM = """
export default { render({ model, el }) {
  el.textContent = "agentcell: the widget bundle is missing (run `npm run build`). Status: " + model.get("status");
} };
"""

FLUSH_INTERVAL = 0.04
"""Seconds between two batches at the least: ≤ 25 a second, under the 30 messages a second a browser takes
well, with room for the few other messages of a run (its status, the end)."""

StopCallback = Callable[[], None]
ApproveCallback = Callable[[str, bool, "str | None"], None]
ForkCallback = Callable[[FrontendMsg], None]


def _asset(name: str) -> pathlib.Path | str:
    path = STATIC / name
    return path if path.exists() else (_FALLBACK_ESM if name.endswith(".js") else "")


class AgentWidget(anywidget.AnyWidget):
    """Shows one run live: the run's log (`follow`) or the events given to `apply` are the only way state changes."""

    _esm = _asset("widget.js")
    _css = _asset("widget.css")

    status = traitlets.Unicode("idle").tag(sync=True)
    """A `LiveStatus` (`agentcell.usage`): idle, running, then how the run ended."""
    final = traitlets.List(traitlets.Dict()).tag(sync=True, to_json=pack, from_json=unpack)
    """The complete event log once the run ended (its last event, `processing_complete`, also carries
    `transcript: {"openai": [...], "pydantic_ai": [...]}` for exact exports); empty while it runs.
    Sent packed: a long text that occurs more than once (the answer: five times) travels once
    (`shared_texts.py`)."""
    hint = traitlets.Unicode("").tag(sync=True)
    """A short note under the header (e.g. how to stop on older kernels)."""
    source = traitlets.Dict({}).tag(sync=True)
    """The cell that produced the run, for the teaching view: `{template, call, values}` (masked; `cell_source.py`)."""
    presentation = traitlets.Bool(False).tag(sync=True)
    """Larger text for a projector (workshops); JupyterLab's View › Presentation Mode does the same for every run."""
    origin = traitlets.Unicode("%%agent").tag(sync=True)
    """What started the run, as the header names it: `%%agent` for a cell, `agentcell` for `show()` (a marimo
    notebook has no `%%agent`)."""
    comparison = traitlets.Dict().tag(sync=True)
    """A fork's "Compare with the original" (`frontends/fork_compare.py`): empty for a run that is no fork shown
    live; `{"original": RUN}` once offered; with `html`, `text` and `summary` (`agentcell.diff`'s) once asked."""

    def __init__(
        self, *, flush_interval: float = FLUSH_INTERVAL, provenance: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.flush_interval = flush_interval
        self.provenance: dict[str, Any] = dict(provenance or {})
        """Extra facts for the saved output's metadata (e.g. `template_sha256`); may be set until the run ends.
        Keys that look like credentials (key, token, secret, password, auth) are never written."""
        self.display_id = f"agentcell-{uuid.uuid4().hex}"
        self.static_display_id = f"{self.display_id}-static"
        self.shown = False
        self.tracked = False
        """Whether the output is published again at the next cell boundary (`saved_outputs.py`)."""
        self._final_bundle: tuple[list[Any], tuple[dict[str, Any], dict[str, Any]]] | None = None
        self.output_metadata: dict[str, Any] = {}
        """What the output's metadata holds under `"agentcell"` once the run ended."""
        self.messages_sent = 0
        """Custom messages sent so far (benchmarks and tests read it)."""
        self._t0 = time.monotonic()
        self._log = EventLog()
        """The run's log (`follow`), or the widget's own for events given to `apply` (a journal read back)."""
        self._sent = 0
        """Events of the log sent to the browser so far (the cursor)."""
        self._notes: list[Note] = []
        """Messages of the view's own (`note`), with their places in the log."""
        self._notes_sent = 0
        self._last_flush = 0.0
        self._flush_handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_stop: StopCallback | None = None
        self._on_approve: ApproveCallback | None = None
        self._on_fork: ForkCallback | None = None
        self.on_compare: Callable[[], None] | None = None
        """What the view's `compare` message does (a fork's view: `fork_compare.offer_comparison`)."""
        self._cell: tuple[contextvars.Context, Any] | None = None
        """Where `show()` ran: the cell's context and its parent header, so a fork started from this view
        ("edit and re-run from here", a comm message) is shown in the same cell, below it (`in_cell`)."""
        self.on_lesson: Callable[[FrontendMsg], None] | None = None
        """Lesson mode's buttons (`step`, `go`, `predict` messages), on the run's loop; set for a stepped run."""
        self.on_msg(self._on_frontend_msg)

    def bind(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        on_stop: StopCallback,
        on_approve: ApproveCallback | None = None,
        on_fork: ForkCallback | None = None,
    ) -> None:
        """Attach the widget to a run: its loop and what Stop / Approve / "edit and re-run from here" do."""
        self._loop, self._on_stop, self._on_approve, self._on_fork = loop, on_stop, on_approve, on_fork

    def follow(self, log: EventLog) -> None:
        """Show the run whose log this is (before any event was shown): `notify` then tells of each new event."""
        self._log, self._sent = log, 0

    def apply(self, event: Event) -> None:
        """Show one more event of a run this widget does not `follow` (a run read back from its journal)."""
        self._log.append(event)
        self.notify(event)

    def notify(self, event: Event) -> None:
        """The log got `event`: schedule a batch (nothing is converted here: `flush` reads the log)."""
        if isinstance(event, RunStarted):
            self.status = "running"
        if isinstance(event, ProcessingComplete):
            self.flush(packed=True)
            # Status first: the first transcript dump builds pydantic-ai's message schema (~0.2 s once
            # per kernel), which must not delay the end a Stop click is waiting for.
            self.status = event.status
            final = self.wire_snapshot()
            # The exact transcript travels once, in the final trait only (not in the live batch).
            final[-1] = {**final[-1], "transcript": transcript_json(event.result)}
            self.final = final
            self.output_metadata = self._provenance(event)
            self._update_output()
            return
        self._schedule_flush()

    # ---- display ---------------------------------------------------------------------------
    def show(self) -> None:
        """Display the live view, then the output that receives the static transcript when the run ends.

        Two adjacent outputs: the widget view (`display_id`), and the static rendering
        (`static_display_id`, empty until the run ends, then updated in place with HTML + text and
        the provenance metadata). Where the widget renders, its CSS hides the static twin; where it
        cannot (no kernel, no widget state, nbconvert offline, GitHub), the static twin shows and its
        own CSS hides the widget's "Loading widget…" placeholder.
        """
        from IPython.display import display

        self.shown = True
        self._cell = (contextvars.copy_context(), parent_header())
        display(self._widget_bundle(), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
        data, metadata = self.static_bundle()
        display(data, raw=True, metadata=metadata, display_id=self.static_display_id)  # type: ignore[no-untyped-call]
        if not self.final:
            from IPython import get_ipython

            keeper = saved_outputs(get_ipython())
            if keeper is not None:
                keeper.track(self)
                self.tracked = True

    def in_cell(self, fn: Callable[[], Any]) -> Any:
        """Call `fn` as if in the cell that showed this view: what it displays goes below this view.

        A browser message is handled under the comm message's parent header, whose outputs no cell shows;
        the cell's own context (ipykernel 7 keeps the parent per context) and parent header fix that.
        """
        if self._cell is None:
            return fn()
        context, parent = self._cell
        return context.copy().run(under_parent, parent, fn)

    def republish(self) -> bool:
        """Publish the saved output again under the cell running now (see `saved_outputs.py`).

        Returns `True` once the run's final transcript went out, `False` while the run is going
        (its transcript so far went out, marked unfinished).
        """
        final = bool(self.final)
        kept, self._final_bundle = self._final_bundle, None
        if self.shown:
            # The end's own update rendered the final transcript already: the same bundle goes out again
            # (for a long answer the rendering took 40-130 ms, at the start of the user's next cell).
            bundle = kept[1] if kept is not None and kept[0] is self.final else self.static_bundle(so_far=True)
            self._publish(*bundle)
        return final

    def _ipython_display_(self) -> None:
        self.show()

    def _widget_bundle(self) -> dict[str, Any]:
        bundle = self._repr_mimebundle_()
        data: dict[str, Any] = dict(bundle[0] if isinstance(bundle, tuple) else bundle or {})
        # Empty: where the view cannot render (no kernel, an untrusted notebook), the front end falls back to
        # this, and the static twin beside it already shows the run; a placeholder would only be noise.
        data["text/plain"] = ""
        return data

    def static_bundle(self, *, so_far: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
        """The static output's data and metadata: the transcript once the run ended.

        While it runs: an empty placeholder, or with `so_far` the transcript so far (marked unfinished).
        """
        if not self.final and (not so_far or not len(self._log.events)):
            return {"text/html": '<div class="agentcell-static" data-status="running"></div>', "text/plain": ""}, {}
        from ...render.html import TEXT_BUDGET, transcript_html, transcript_text
        from ...transcript import Transcript

        events, facts = (self.final, self.output_metadata) if self.final else (self.wire_snapshot(), self.provenance)
        tr = Transcript.from_wire(events)  # reduced once for both renderings
        data = {"text/html": transcript_html(tr, facts),
                "text/plain": transcript_text(tr, facts, answer_chars=TEXT_BUDGET)}
        if self.final and "html" in self.comparison:  # a fork's "Compare with the original", once opened
            data = {"text/html": data["text/html"] + self.comparison["html"],
                    "text/plain": data["text/plain"] + "\n\n" + self.comparison["text"]}
        return data, ({"agentcell": self.output_metadata} if self.final else {})

    def refresh_output(self) -> None:
        """Render the saved output again (something shown beside the ended run changed: a fork's comparison)."""
        self._update_output()

    def _update_output(self) -> None:
        if self.shown:
            bundle = self.static_bundle()
            if self.tracked and self.final:  # kept only until the next cell boundary publishes it again
                self._final_bundle = (self.final, bundle)
            self._publish(*bundle)

    def _publish(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        from IPython.display import update_display

        try:
            update_display(  # type: ignore[no-untyped-call]
                data, raw=True, metadata=metadata, display_id=self.static_display_id)
        except Exception as exc:  # no display publisher (plain Python): the live view already shows the end
            self.log.debug("agentcell: could not update the output: %s", exc)

    def _provenance(self, event: ProcessingComplete) -> dict[str, Any]:
        result = event.result
        facts: dict[str, Any] = {
            "agentcell_version": __version__,
            "run_id": event.run_id,
            "status": event.status,
            "model": result.model,
            "limits": jsonable(result.limits),
            "usage": usage_json(result.usage),
        }
        for key, value in self.provenance.items():
            if key not in facts and not _SECRET_KEY.search(str(key)):
                facts[str(key)] = jsonable(value)
        return facts

    def note(self, message: str, *, run_id: str = "") -> None:
        """Show a warning of the view's own (not the run's: the run reports its own as events), in its place."""
        self._notes.append((len(self._log.events), {"kind": "run_warning", "run_id": run_id, "slot": None,
                                                    "message": message, "t": self._now()}))
        self._schedule_flush()

    def fail(self, message: str) -> None:
        """Show an error that escaped the run (the run itself reports its own failures as events)."""
        self.note(message)
        self.flush()
        self.status = "failed"

    def wire_snapshot(self) -> list[WireEvent]:
        """Every event so far as the browser gets it (text deltas merged); the caller may keep the list."""
        return wire_events(self._log, 0, shift=self._log.t0 - self._t0, notes=self._notes)

    def flush(self, *, packed: bool = False) -> None:
        """Send the pending events now, as one message.

        `packed`: with each long text that occurs more than once sent once (`shared_texts.pack`). The run's
        last batch holds the answer twice (`slot_completed.value` and `processing_complete.answer`): 560 KB
        of JSON for a 50,000-token answer, which JupyterLab decodes in one task. Only there: a live batch
        of tokens has no long text to share, and looking costs a pass over its events.
        """
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        end = len(self._log.events)
        if end == self._sent and self._notes_sent == len(self._notes):
            return
        batch = wire_events(self._log, self._sent, shift=self._log.t0 - self._t0, notes=self._notes[self._notes_sent:])
        self._sent, self._notes_sent = end, len(self._notes)
        self._last_flush = time.monotonic()
        self.messages_sent += 1
        self.send({"kind": "events", "events": pack(batch) if packed else batch, "t": self._now()})

    def _now(self) -> float:
        return round(time.monotonic() - self._t0, 3)

    def _schedule_flush(self) -> None:
        if self._flush_handle is not None:
            return
        loop = self._loop or running_loop()
        if loop is None:
            self.flush()
            return
        wait = max(0.0, self._last_flush + self.flush_interval - time.monotonic())
        self._flush_handle = loop.call_later(wait, self._timed_flush)

    def _timed_flush(self) -> None:
        self._flush_handle = None
        self.flush()

    def _on_frontend_msg(self, _widget: object, content: FrontendMsg, _buffers: list[bytes]) -> None:
        note_view()
        kind = content.get("kind")
        if kind == "stop":
            # Possibly on a subshell thread: the callback must be thread-safe (call_soon_threadsafe).
            if self._on_stop is not None:
                self._on_stop()
            return
        if self._loop is not None and running_loop() is not self._loop:
            self._loop.call_soon_threadsafe(self._dispatch_frontend, content)
        else:
            self._dispatch_frontend(content)

    def _dispatch_frontend(self, content: FrontendMsg) -> None:
        match content.get("kind"):
            case "snapshot_request":
                # Flush first: every view then resets on the snapshot, so nothing is applied twice.
                self.flush()
                self.messages_sent += 1
                self.send({"kind": "snapshot", "events": pack(self.wire_snapshot()), "t": self._now()})
            case "approve" if self._on_approve is not None:
                self._on_approve(str(content.get("call_id")), bool(content.get("approved")), content.get("reason"))
            case "fork" if self._on_fork is not None:
                self._on_fork(content)
            case "step" | "go" | "predict" if self.on_lesson is not None:
                self.on_lesson(content)
            case "compare" if self.on_compare is not None:
                self.in_cell(self.on_compare)
            case _:
                pass

    def __repr__(self) -> str:
        return f"<AgentWidget status={self.status!r} events={len(self._log.events)}>"
