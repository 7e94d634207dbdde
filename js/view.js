// The widget view: wires an anywidget model to the reducer and the DOM.
//
// Data flow: custom messages {kind:"events"|"snapshot"} and the `final` trait feed `reduce`; any change
// schedules one render on the next animation frame (with a timer fallback for hidden tabs), so the DOM
// is touched at most once per frame whatever the event rate.
import { createState, currentSlotUsage, displayStatus, isTextType, reduce, slotAnswer, TERMINAL } from "./state.js";
import { formatCost, formatCount, formatElapsed, formatJSON, formatTokens, plural, statusLabel } from "./format.js";
import { h, setAttr, setText, swap, syncChildren } from "./render/dom.js";
import { renderItem, TEACH_ONLY_ITEMS } from "./render/items.js";
import { AnswerView } from "./render/answer.js";
import { appendCoalesced, buildTranscript, openaiMessages } from "./transcript.js";

const TICK_MS = 250;
// [value, label, download file suffix]
const EXPORT_FORMATS = [
  ["openai", "OpenAI messages", "openai.json"],
  ["pydantic_ai", "pydantic-ai messages", "pydantic-ai.json"],
  ["events", "agentcell events", "events.json"],
];

function meterEl(cls, label) {
  const bar = h("span", { class: "agentcell-bar-fill" });
  const text = h("span", { class: "agentcell-meter-text" });
  const el = h(
    "span",
    { class: ["agentcell-meter-item", cls], title: `${label} used by the current slot / ceiling per slot` },
    h("span", { class: "agentcell-meter-label" }, label, " "),
    text,
    h("span", { class: "agentcell-bar", "aria-hidden": "true" }, bar),
  );
  return { el, bar, text };
}

/** run_started.tools + run_started.tool_schemas ([{name, description, parameters_json_schema}]) → elements. */
function toolDeclarations(tools, schemas) {
  const byName = new Map();
  for (const t of tools) byName.set(t, null);
  const structured = Array.isArray(schemas) && schemas.every((s) => s && typeof s === "object" && !Array.isArray(s));
  if (structured) for (const s of schemas) byName.set(String(s.name ?? "?"), s);
  const n = byName.size;
  const out = [h("div", { class: "agentcell-label" }, n ? `${plural(n, "tool")} offered to the model:` : "no tools offered")];
  if (n) {
    const items = [];
    for (const [name, s] of byName) {
      const schema = s ? (s.parameters_json_schema ?? s.parameters ?? s.input_schema) : undefined;
      items.push(
        h(
          "li",
          { class: "agentcell-tool-decl", data: { tool: name } },
          h("span", { class: "agentcell-tool-name" }, name),
          s?.description ? h("div", { class: "agentcell-tool-description" }, String(s.description)) : null,
          schema !== undefined
            ? h(
                "details",
                { class: "agentcell-collapse agentcell-tool-schema", data: { part: `schema-${name}`, tool: name }, open: true },
                h("summary", { class: "agentcell-collapse-summary" }, "parameters (JSON schema)"),
                h("pre", { class: "agentcell-pre agentcell-tool-schema-json" }, formatJSON(schema)),
              )
            : null,
        ),
      );
    }
    out.push(h("ul", { class: "agentcell-tool-list" }, items));
  }
  // Some other shape: shown as it came.
  if (schemas != null && !structured) out.push(h("pre", { class: "agentcell-pre agentcell-tool-schemas" }, formatJSON(schemas)));
  return out;
}

export function createView(model, el, opts = {}) {
  const now = opts.now ?? (() => (globalThis.performance ? performance.now() : Date.now()));
  const raf = opts.requestAnimationFrame ?? globalThis.requestAnimationFrame?.bind(globalThis);
  const caf = opts.cancelAnimationFrame ?? globalThis.cancelAnimationFrame?.bind(globalThis);

  let state = createState();
  let events = []; // coalesced copy, for export
  let teaching = false;
  let stopping = false;
  const sentApprovals = new Map(); // call_id -> approved (sent, not yet resolved)
  let sentVersion = 0;
  let slotViews = new Map();
  let runItemCache = new WeakMap();
  let elapsedAnchor = { t: 0, at: now() };
  let shownElapsed = 0;
  let destroyed = false;

  // ---- skeleton -------------------------------------------------------------------------------
  const modelEl = h("span", { class: "agentcell-model", title: "model" });
  const offlineEl = h("span", { class: "agentcell-badge agentcell-offline", hidden: true, title: "No model configured: the offline default model answers with canned behaviour; nothing is sent over the network." }, "offline default model");
  const statusEl = h("span", { class: "agentcell-status", role: "status", "aria-live": "polite" });
  const elapsedEl = h("span", { class: "agentcell-elapsed", title: "elapsed time" }, "0.0 s");
  const mReq = meterEl("agentcell-meter-requests", "requests");
  const mTools = meterEl("agentcell-meter-tools", "tool calls");
  const tokensEl = h("span", { class: "agentcell-meter-item agentcell-tokens", title: "tokens in / out (whole run)" });
  const costEl = h("span", { class: "agentcell-meter-item agentcell-cost", title: "cost (whole run)", hidden: true });
  const ctxFill = h("span", { class: "agentcell-bar-fill" });
  const ctxText = h("span", { class: "agentcell-meter-text" });
  const contextEl = h(
    "span",
    { class: "agentcell-meter-item agentcell-context", hidden: true },
    h("span", { class: "agentcell-meter-label" }, "context "),
    ctxText,
    h("span", { class: "agentcell-bar", "aria-hidden": "true" }, ctxFill),
  );
  const meter = h("div", { class: "agentcell-meter" }, mReq.el, mTools.el, contextEl, tokensEl, costEl);

  const teachBtn = h("button", { type: "button", class: "agentcell-btn agentcell-teach", aria: { pressed: "false", label: "Teaching view: show tool declarations and raw JSON" }, title: "Teaching view" }, "Teaching view");
  const formatSel = h(
    "select",
    { class: "agentcell-export-format", aria: { label: "Transcript format for Copy and Download" }, title: "Transcript format" },
    EXPORT_FORMATS.map(([value, label]) => h("option", { value }, label)),
  );
  const copyBtn = h("button", { type: "button", class: "agentcell-btn agentcell-copy", aria: { label: "Copy transcript JSON" }, title: "Copy the transcript as JSON" }, "Copy");
  const downloadBtn = h("button", { type: "button", class: "agentcell-btn agentcell-download", aria: { label: "Download transcript JSON" }, title: "Download the transcript as JSON" }, "Download");
  const stopBtn = h("button", { type: "button", class: "agentcell-btn agentcell-stop", aria: { label: "Stop the run" }, title: "Stop the run" }, "Stop");
  const actions = h("div", { class: "agentcell-actions" }, teachBtn, formatSel, copyBtn, downloadBtn, stopBtn);

  const header = h(
    "div",
    { class: "agentcell-header" },
    h("div", { class: "agentcell-title" }, h("span", { class: "agentcell-logo", "aria-hidden": "true" }, "%%agent"), modelEl, offlineEl, statusEl, elapsedEl),
    meter,
    actions,
  );
  const hintEl = h("div", { class: "agentcell-hint", hidden: true });
  const noticeEl = h("div", { class: "agentcell-notice", role: "status", hidden: true });
  const runItemsEl = h("div", { class: "agentcell-run-items" });
  const slotsEl = h("div", { class: "agentcell-slots" });
  const teachToolsEl = h("div", { class: "agentcell-teach-tools" });
  const teachUnknownEl = h("div", { class: "agentcell-teach-unknown" });
  const teachPanel = h(
    "div",
    { class: "agentcell-teaching agentcell-teach-only" },
    h("div", { class: "agentcell-teach-title" }, "Teaching view"),
    teachToolsEl,
    h("div", { class: "agentcell-teach-note agentcell-muted" }, "Per-round requests and responses appear in each round when the kernel sends them."),
    teachUnknownEl,
  );
  const root = h("div", { class: "agentcell", data: { status: "idle", teaching: "false" } }, header, hintEl, noticeEl, runItemsEl, slotsEl, teachPanel);
  el.append(root);

  // ---- actions -------------------------------------------------------------------------------
  const send = (msg) => {
    try {
      model.send(msg);
    } catch (err) {
      console.warn("[agentcell] send failed", err);
    }
  };
  stopBtn.addEventListener("click", () => {
    if (stopBtn.disabled) return;
    send({ kind: "stop" });
    stopping = true;
    schedule();
  });
  teachBtn.addEventListener("click", () => {
    teaching = !teaching;
    schedule();
  });
  // The exact transcript (processing_complete.transcript, from RunResult) once the run ended; before
  // that, OpenAI messages are approximated from the events and pydantic-ai messages are not available.
  const exportData = (fmt) => {
    const exact = state.extra?.transcript;
    if (fmt === "openai") return exact?.openai ?? openaiMessages(state);
    if (fmt === "pydantic_ai") return exact?.pydantic_ai ?? null;
    return buildTranscript(state, events, { traitStatus: model.get("status") });
  };
  const transcriptJSON = (fmt = formatSel.value) => {
    const data = exportData(fmt);
    return data === null ? null : JSON.stringify(data, null, 2);
  };
  const unavailable = () => notice("pydantic-ai messages are available once the run has ended");
  let noticeTimer = null;
  const notice = (text) => {
    noticeEl.textContent = text;
    noticeEl.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => (noticeEl.hidden = true), 2500);
  };
  copyBtn.addEventListener("click", async () => {
    const text = transcriptJSON();
    if (text === null) return unavailable();
    try {
      await navigator.clipboard.writeText(text);
      notice("transcript copied");
    } catch {
      // Clipboard API unavailable (insecure context, permissions): the legacy way.
      const ta = h("textarea", { class: "agentcell-offscreen", "aria-hidden": "true" });
      ta.value = text;
      root.append(ta);
      ta.select();
      let ok = false;
      try {
        ok = document.execCommand("copy");
      } catch {
        /* ignore */
      }
      ta.remove();
      notice(ok ? "transcript copied" : "copy failed: use Download");
    }
  });
  downloadBtn.addEventListener("click", () => {
    const text = transcriptJSON();
    if (text === null) return unavailable();
    try {
      const blob = new Blob([text], { type: "application/json" });
      const url = URL.createObjectURL(blob);
      const suffix = EXPORT_FORMATS.find(([v]) => v === formatSel.value)?.[2] ?? "json";
      const a = h("a", { href: url, download: `agentcell-${state.runId ?? "run"}.${suffix}`, class: "agentcell-offscreen" });
      root.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      console.warn("[agentcell] download failed", err);
      notice("download failed");
    }
  });
  const onApprove = (callId, approved, reason) => {
    send({ kind: "approve", call_id: callId, approved, reason: approved ? null : reason });
    sentApprovals.set(callId, approved);
    sentVersion++;
    schedule();
  };

  // ---- state updates -------------------------------------------------------------------------
  function reset() {
    state = createState();
    events = [];
    slotViews = new Map();
    runItemCache = new WeakMap();
    teachKey = {};
    slotsEl.replaceChildren();
    runItemsEl.replaceChildren();
    shownElapsed = 0;
  }
  function apply(list) {
    if (!Array.isArray(list)) return;
    const before = state.lastT;
    for (const ev of list) {
      if (!ev || typeof ev !== "object") continue;
      const prevRun = state.runId;
      reduce(state, ev);
      if (prevRun !== null && state.runId !== prevRun) {
        // A new run replaced the old one inside reduce: drop the old DOM too.
        const s = state;
        reset();
        state = s;
      }
      appendCoalesced(events, ev);
    }
    if (state.lastT !== before) elapsedAnchor = { t: state.lastT, at: now() };
  }
  function onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "events") apply(msg.events);
    else if (msg.kind === "snapshot") {
      reset();
      apply(msg.events);
    } else return;
    // Optional: the kernel's clock (seconds since run start) when it sent this message, so a view that
    // opens late during a long silent tool call still shows the true elapsed time.
    if (typeof msg.t === "number" && Number.isFinite(msg.t) && msg.t >= state.lastT) elapsedAnchor = { t: msg.t, at: now() };
    schedule();
  }
  function loadFinal() {
    const final = model.get("final");
    if (!Array.isArray(final) || final.length === 0) return false;
    if (!state.ended) {
      reset();
      apply(final);
      return true;
    }
    // Live views already have every event; the final trait adds the exact transcript for export.
    const last = final[final.length - 1];
    if (last && last.kind === "processing_complete" && last.run_id === state.runId && last.transcript) {
      state.extra.transcript = last.transcript;
    }
    return true;
  }
  const onFinal = () => {
    loadFinal();
    schedule();
  };
  const onTrait = () => schedule();

  // ---- rendering -----------------------------------------------------------------------------
  let pending = false;
  let rafId = null;
  let timerId = null;
  function schedule() {
    if (pending || destroyed) return;
    pending = true;
    if (raf) rafId = raf(run);
    timerId = setTimeout(run, TICK_MS); // rAF does not fire in hidden tabs
  }
  function run() {
    if (!pending) return;
    pending = false;
    if (rafId !== null && caf) caf(rafId);
    clearTimeout(timerId);
    rafId = timerId = null;
    flush();
  }

  function elapsedSeconds(status) {
    if (state.ended) return state.endT ?? state.lastT;
    if (TERMINAL.has(status) || !state.started) return state.lastT;
    const live = elapsedAnchor.t + (now() - elapsedAnchor.at) / 1000;
    shownElapsed = Math.max(shownElapsed, live);
    return shownElapsed;
  }

  function renderElapsed() {
    const status = displayStatus(model.get("status"), state);
    setText(elapsedEl, formatElapsed(elapsedSeconds(status)));
  }

  function renderHeader(status) {
    setAttr(root, "data-status", status);
    setAttr(root, "data-teaching", teaching ? "true" : "false");
    setText(modelEl, state.model || (state.started ? "model" : "…"));
    offlineEl.hidden = !state.offline;
    setAttr(root, "data-offline", state.offline ? "true" : null);
    setText(statusEl, statusLabel(status) + (state.earlyTermination && status === "halted" ? " (guard)" : ""));
    renderElapsed();

    const ended = TERMINAL.has(status);
    stopBtn.disabled = ended;
    setAttr(stopBtn, "aria-disabled", ended ? "true" : "false");
    if (!ended && stopping) setText(stopBtn, "Stopping…");
    else setText(stopBtn, "Stop");
    setAttr(stopBtn, "data-stopping", stopping && !ended ? "true" : null);
    setAttr(teachBtn, "aria-pressed", teaching ? "true" : "false");

    const hint = model.get("hint");
    hintEl.hidden = !hint || ended;
    setText(hintEl, hint || "");

    const lim = state.limits ?? {};
    const su = currentSlotUsage(state);
    const meterSet = (m, used, limit) => {
      const has = Number.isFinite(limit) && limit > 0;
      setText(m.text, has ? `${used}/${limit}` : String(used));
      setAttr(m.el, "data-used", used);
      setAttr(m.el, "data-limit", has ? limit : null);
      const frac = has ? Math.min(1, used / limit) : 0;
      m.bar.style.width = `${(frac * 100).toFixed(1)}%`;
      setAttr(m.el, "data-level", !has ? null : frac >= 1 ? "full" : frac >= 0.8 ? "high" : "ok");
    };
    meterSet(mReq, su.requests, lim.requests);
    meterSet(mTools, su.tool_calls, lim.tool_calls);
    const u = state.usage;
    setText(tokensEl, `tokens ${formatCount(u.input_tokens)} in / ${formatCount(u.output_tokens)} out`);
    setAttr(tokensEl, "data-input", u.input_tokens);
    setAttr(tokensEl, "data-output", u.output_tokens);
    const cost = formatCost(u.cost);
    costEl.hidden = cost === "";
    setText(costEl, cost);
    renderContext();
  }

  function renderContext() {
    const c = state.context;
    contextEl.hidden = !(c && c.window > 0);
    setAttr(root, "data-segment", state.segment > 1 ? state.segment : null);
    if (contextEl.hidden) return;
    const frac = Math.max(0, c.fraction);
    setText(ctxText, `${c.estimated ? "~" : ""}${formatTokens(c.used)} / ${formatTokens(c.window)}`);
    setAttr(contextEl, "data-used", c.used);
    setAttr(contextEl, "data-window", c.window);
    setAttr(contextEl, "data-fraction", Math.round(frac * 1e4) / 1e4);
    setAttr(contextEl, "data-level", frac >= 1 ? "full" : frac > 0.8 ? "high" : "ok");
    setAttr(contextEl, "data-limit", c.window || null); // shows the bar (CSS hides it without a limit)
    const slot = c.slot != null ? ` of slot ${c.slot}` : "";
    setAttr(contextEl, "title", `context window in use${slot} after request ${c.request ?? "?"}: ${(frac * 100).toFixed(1)}%${c.estimated ? " (estimate after compaction)" : ""}`);
    ctxFill.style.width = `${(Math.min(1, frac) * 100).toFixed(1)}%`;
  }

  function itemEl(cache, item, ctx, key) {
    const hit = cache.get(item);
    const k = `${item.v}|${key}`;
    if (hit && hit.key === k) return hit.el;
    const next = renderItem(item, ctx);
    if (hit) swap(hit.el, next);
    cache.set(item, { el: next, key: k });
    return next;
  }

  function newSlotView(slot) {
    const nameEl = h("span", { class: "agentcell-slot-name" });
    const typeEl = h("span", { class: "agentcell-slot-type" });
    const statusE = h("span", { class: "agentcell-slot-status" });
    const usageEl = h("span", { class: "agentcell-slot-usage" });
    const timeline = h("div", { class: "agentcell-timeline" });
    const drafting = h("div", { class: "agentcell-drafting", hidden: true, role: "status" });
    const md = h("div", { class: "agentcell-markdown" });
    const value = h("pre", { class: "agentcell-value", hidden: true });
    const stoppedMark = h("div", { class: "agentcell-answer-stopped", hidden: true });
    const answer = h("div", { class: "agentcell-answer", data: { slot: slot.name } }, drafting, md, value, stoppedMark);
    const error = h("div", { class: "agentcell-slot-error", hidden: true, role: "alert" });
    const section = h(
      "section",
      { class: "agentcell-slot", data: { slot: slot.name }, aria: { label: `slot ${slot.name}` } },
      h("div", { class: "agentcell-slot-head" }, nameEl, typeEl, statusE, usageEl),
      timeline,
      answer,
      error,
    );
    return {
      section, nameEl, typeEl, statusE, usageEl, timeline, drafting, md, value, stoppedMark, answer, error,
      answerView: new AnswerView(md),
      rounds: new Map(),
      items: new WeakMap(),
      key: null,
    };
  }

  function renderSlot(slot, sv, ctx, ctxKey, runEnded) {
    const key = `${slot.v}|${ctxKey}|${runEnded}`;
    if (sv.key === key) return;
    sv.key = key;
    const shownStatus = slot.status === "pending" && runEnded ? "skipped" : slot.status;
    setAttr(sv.section, "data-slot-type", slot.type);
    setAttr(sv.section, "data-slot-status", shownStatus);
    setAttr(sv.section, "data-kept", slot.kept ? "true" : null);
    setText(sv.nameEl, slot.name);
    setText(sv.typeEl, slot.type + (slot.required ? " (required)" : "") + (slot.useTools ? " · tools" : ""));
    const label = shownStatus === "completed" ? "done" : shownStatus === "pending" ? "waiting" : statusLabel(shownStatus) || shownStatus;
    setText(sv.statusE, slot.kept ? `${label} (kept from an earlier segment)` : label);
    const u = slot.usage;
    setText(sv.usageEl, u.requests || u.tool_calls ? `${plural(u.requests, "request")} · ${plural(u.tool_calls, "tool call")}` : "");

    // timeline
    const roundEls = [];
    const rounds = [...slot.rounds.values()].sort((a, b) => a.round - b.round);
    for (const round of rounds) {
      if (round.items.length === 0) continue;
      let rv = sv.rounds.get(round.round);
      if (!rv) {
        const items = h("div", { class: "agentcell-round-items" });
        rv = { el: h("div", { class: "agentcell-round", data: { round: round.round } }, h("div", { class: "agentcell-round-label" }, `round ${round.round}`), items), items, key: null };
        sv.rounds.set(round.round, rv);
      }
      const rkey = `${round.v}|${ctxKey}|${runEnded}`;
      if (rv.key !== rkey) {
        rv.key = rkey;
        syncChildren(rv.items, round.items.map((it) => itemEl(sv.items, it, ctx, `${ctxKey}|${runEnded}`)));
        // A round with only teaching items (request rows, payloads) is hidden in the normal view.
        rv.el.classList.toggle("agentcell-teach-only", round.items.every((it) => TEACH_ONLY_ITEMS.has(it.type)));
      }
      roundEls.push(rv.el);
    }
    syncChildren(sv.timeline, roundEls);

    // answer
    const text = slotAnswer(slot);
    const typed = !isTextType(slot.type) && !slot.sawTokens;
    const done = slot.status !== "running" && slot.status !== "pending";
    sv.drafting.hidden = !(typed && slot.status === "running" && !slot.hasValue && !runEnded);
    setText(sv.drafting, sv.drafting.hidden ? "" : "drafting…");
    if (typed) {
      sv.md.hidden = true;
      sv.value.hidden = !slot.hasValue;
      if (slot.hasValue) setText(sv.value, formatJSON(slot.value));
    } else {
      sv.md.hidden = false;
      sv.value.hidden = true;
      sv.answerView.update(text, done || runEnded);
    }
    setAttr(sv.answer, "data-empty", (typed ? !slot.hasValue : text === "") ? "true" : null);
    setAttr(sv.answer, "data-stopped", slot.answerStopped ? "true" : null);
    sv.stoppedMark.hidden = !slot.answerStopped;
    setText(sv.stoppedMark, slot.answerStopped ? `partial answer — ${statusLabel(slot.status === "running" ? "stopped" : slot.status)}` : "");
    sv.error.hidden = !slot.error;
    setText(sv.error, slot.error ?? "");
  }

  let teachKey = { tools: undefined, schemas: undefined, unknown: -1 };
  function renderTeaching() {
    if (!teaching) return;
    if (teachKey.tools !== state.tools || teachKey.schemas !== state.toolSchemas) {
      // Rebuilt only when run_started changes them, so the reader's open/closed <details> stay put.
      teachKey = { ...teachKey, tools: state.tools, schemas: state.toolSchemas };
      syncChildren(teachToolsEl, toolDeclarations(state.tools, state.toolSchemas));
    }
    if (teachKey.unknown !== state.unknownCount) {
      teachKey.unknown = state.unknownCount;
      if (state.unknown.length) {
        syncChildren(teachUnknownEl, [
          h("div", { class: "agentcell-label" }, `events this widget does not know yet (${state.unknownCount}):`),
          h("pre", { class: "agentcell-pre" }, formatJSON(state.unknown)),
        ]);
      } else teachUnknownEl.replaceChildren();
    }
  }

  function flush() {
    if (destroyed) return;
    if (teachKey.state !== state) teachKey = { state }; // a reset or a new run: draw the teaching panel anew
    try {
      const status = displayStatus(model.get("status"), state);
      const ended = TERMINAL.has(status);
      if (ended) stopping = false;
      renderHeader(status);
      const ctx = { teaching, ended, sentApprovals, onApprove };
      const ctxKey = `${teaching}|${sentVersion}`;
      // run-level items
      syncChildren(runItemsEl, state.run.items.map((it) => itemEl(runItemCache, it, ctx, `${ctxKey}|${ended}`)));
      // slots
      const els = [];
      for (const slot of state.slots.values()) {
        let sv = slotViews.get(slot.name);
        if (!sv) slotViews.set(slot.name, (sv = newSlotView(slot)));
        renderSlot(slot, sv, ctx, ctxKey, ended);
        els.push(sv.section);
      }
      syncChildren(slotsEl, els);
      renderTeaching();
    } catch (err) {
      console.error("[agentcell] render failed", err);
    }
  }

  // ---- wiring --------------------------------------------------------------------------------
  model.on("msg:custom", onMessage);
  model.on("change:final", onFinal);
  model.on("change:status", onTrait);
  model.on("change:hint", onTrait);
  const ticker = setInterval(() => {
    if (state.started && !state.ended && !TERMINAL.has(model.get("status"))) renderElapsed();
  }, TICK_MS);

  if (!loadFinal()) send({ kind: "snapshot_request" });
  flush();

  function destroy() {
    destroyed = true;
    clearInterval(ticker);
    clearTimeout(timerId);
    clearTimeout(noticeTimer);
    if (rafId !== null && caf) caf(rafId);
    model.off("msg:custom", onMessage);
    model.off("change:final", onFinal);
    model.off("change:status", onTrait);
    model.off("change:hint", onTrait);
    root.remove();
  }

  return {
    root,
    flush,
    destroy,
    get state() {
      return state;
    },
    get events() {
      return events;
    },
    transcript: () => buildTranscript(state, events, { traitStatus: model.get("status") }),
    answerView: (name) => slotViews.get(name)?.answerView,
  };
}
