// The body: run-level items, then one section per slot (head, timeline of rounds, answer, error).
// Each object's `v` (bumped by the reducer) plus the render context forms a key, so only what
// changed is rebuilt; <details> a reader opened stay open across rebuilds (dom.swap).
import { isTextType, slotAnswer, takeAppended } from "../state.js";
import { formatCost, formatJSON, label, plural, statusLabel } from "../format.js";
import { h, setAttr, setHidden, setText, swap, syncChildren } from "../render/dom.js";
import { ENDED_ITEMS, forkControls, renderItem, TEACH_ONLY_ITEMS } from "../render/items.js";
import { ANSWER_SLICE, ANSWER_SLICE_MS, AnswerView } from "../render/answer.js";
import { copyItemButton } from "../render/copy.js";

/** `now`: the view's clock, which the answer views also time their work by. */
export function createBody(now = () => performance.now()) {
  return {
    now,
    runItemsEl: h("div", { class: "agentcell-run-items" }),
    slotsEl: h("div", { class: "agentcell-slots" }),
    slotViews: new Map(),
    runItemCache: new WeakMap(),
  };
}

export function resetBody(body) {
  body.slotViews = new Map();
  body.runItemCache = new WeakMap();
  body.slotsEl.replaceChildren();
  body.runItemsEl.replaceChildren();
}

/**
 * The element of `item`, rebuilt only when its version or the render key changed; the run's end changes
 * the key only of the items that show it (ENDED_ITEMS).
 */
function itemEl(cache, item, rctx, key) {
  const hit = cache.get(item);
  const k = ENDED_ITEMS.has(item.type) ? `${item.v}|${key}|${rctx.ended}` : `${item.v}|${key}`;
  if (hit && hit.key === k) return hit.el;
  const next = renderItem(item, rctx);
  if (hit) swap(hit.el, next);
  cache.set(item, { el: next, key: k });
  return next;
}

function newSlotView(slot, now) {
  const sv = {
    nameEl: h("span", { class: "agentcell-slot-name" }),
    typeEl: h("span", { class: "agentcell-slot-type" }),
    statusE: h("span", { class: "agentcell-slot-status" }),
    usageEl: h("span", { class: "agentcell-slot-usage" }),
    copyBtn: copyItemButton(`answer of slot ${slot.name} (Markdown)`, () => slotAnswer(slot) || null),
    timeline: h("div", { class: "agentcell-timeline" }),
    drafting: h("div", { class: "agentcell-drafting", hidden: true, role: "status" }),
    md: h("div", { class: "agentcell-markdown" }),
    value: h("pre", { class: "agentcell-value", hidden: true }),
    stoppedMark: h("div", { class: "agentcell-answer-stopped", hidden: true }),
    // Not an alert: the header's status already announces the run's end (one announcement per change).
    error: h("div", { class: "agentcell-slot-error", hidden: true }),
    fork: h("div", { class: "agentcell-slot-fork" }),
    rounds: new Map(),
    items: new WeakMap(),
    key: null,
  };
  sv.answer = h("div", { class: "agentcell-answer", data: { slot: slot.name } }, sv.drafting, sv.md, sv.value, sv.stoppedMark);
  sv.section = h(
    "section",
    { class: "agentcell-slot", data: { slot: slot.name }, aria: { label: `slot ${slot.name}` } },
    // A heading per slot (and per round, below) lets a screen reader jump through a long run.
    h("div", { class: "agentcell-slot-bar" }, h("h3", { class: "agentcell-slot-head" }, sv.nameEl, " ", sv.typeEl, " ", sv.statusE, " ", sv.usageEl), sv.copyBtn),
    sv.timeline,
    sv.answer,
    sv.error,
    sv.fork,
  );
  // An answer longer than ANSWER_SLICE characters that arrives at once (snapshot, saved notebook) is
  // rendered a slice per task (at most ANSWER_SLICE characters, stopping early past ANSWER_SLICE_MS, in idle
  // time where the browser has it), so no single task renders all of it.
  sv.answerView = new AnswerView(sv.md, {
    slice: ANSWER_SLICE, budgetMs: ANSWER_SLICE_MS, defer: whenIdle, clock: now,
  });
  return sv;
}

/**
 * Run `fn` when the page is idle (at most 50 ms later), else in a zero timeout. The catch-up slices run
 * in idle time, so the browser's own idle work (its garbage collector) is not crowded into their tasks.
 */
function whenIdle(fn) {
  if (typeof globalThis.requestIdleCallback === "function") globalThis.requestIdleCallback(() => fn(), { timeout: 50 });
  else setTimeout(fn, 0);
}

function renderSlotHead(slot, sv, runEnded) {
  // In a run that ended, a slot that never ran was skipped, and one still running was cut off without an
  // ending of its own (its kernel went away mid-run): it no longer says "running".
  const shownStatus = !runEnded ? slot.status : slot.status === "pending" ? "skipped" : slot.status === "running" ? "interrupted" : slot.status;
  setAttr(sv.section, "data-slot-type", slot.type);
  setAttr(sv.section, "data-slot-status", shownStatus);
  setAttr(sv.section, "data-kept", slot.kept ? "true" : null);
  setText(sv.nameEl, slot.name);
  setText(sv.typeEl, slot.type + (slot.required ? ` (${label("required")})` : "") + (slot.useTools ? " · tools" : ""));
  const status = statusLabel(shownStatus) || shownStatus;
  setText(sv.statusE, slot.kept ? label("kept_slot", { status }) : status);
  const u = slot.usage;
  const cost = u.requests ? ` · cost ${formatCost(u.cost)}` : ""; // the slot's cost: "—" when the price is unknown
  setText(sv.usageEl, u.requests || u.tool_calls ? `${plural(u.requests, "request")} · ${plural(u.tool_calls, "tool call")}${cost}` : "");
  sv.copyBtn.agentcellCopy = () => slotAnswer(slot) || null; // the slot object may be replaced by a snapshot
  // Whether there is an answer, without reading it whole (a long answer is a rope: see takeAppended).
  setHidden(sv.copyBtn, !isTextType(slot.type) || !(slot.finalText || slot.streamed.size));
}

function roundView(sv, round) {
  let rv = sv.rounds.get(round.round);
  if (!rv) {
    const items = h("div", { class: "agentcell-round-items" });
    const heading = h("h4", { class: "agentcell-round-label" }, label("round", { round: round.round }));
    rv = { el: h("div", { class: "agentcell-round", data: { round: round.round } }, heading, items), items, key: null };
    sv.rounds.set(round.round, rv);
  }
  return rv;
}

function renderTimeline(slot, sv, rctx, key) {
  const roundEls = [];
  for (const round of [...slot.rounds.values()].sort((a, b) => a.round - b.round)) {
    if (round.items.length === 0) continue;
    const rv = roundView(sv, round);
    const rkey = `${round.v}|${key}|${rctx.ended && round.items.some((it) => ENDED_ITEMS.has(it.type))}`;
    if (rv.key !== rkey) {
      rv.key = rkey;
      syncChildren(rv.items, round.items.map((it) => itemEl(sv.items, it, rctx, key)));
      // A round with only teaching items (request rows, payloads) is hidden in the normal view.
      rv.el.classList.toggle("agentcell-teach-only", round.items.every((it) => TEACH_ONLY_ITEMS.has(it.type)));
    }
    roundEls.push(rv.el);
  }
  syncChildren(sv.timeline, roundEls);
}

function renderAnswer(slot, sv, runEnded) {
  const text = slotAnswer(slot);
  const typed = !isTextType(slot.type) && !slot.sawTokens;
  const done = slot.status !== "running" && slot.status !== "pending";
  setHidden(sv.drafting, !(typed && slot.status === "running" && !slot.hasValue && !runEnded));
  setText(sv.drafting, sv.drafting.hidden ? "" : label("drafting"));
  setAttr(sv.answer, "data-drafting", !sv.drafting.hidden); // the caret is not drawn next to "drafting…"
  if (typed) {
    setHidden(sv.md, true);
    setHidden(sv.value, !slot.hasValue);
    if (slot.hasValue) setText(sv.value, formatJSON(slot.value));
  } else {
    setHidden(sv.md, false);
    setHidden(sv.value, true);
    // While the slot streams, the view takes only what was appended (no read of the whole answer); a
    // new state (a snapshot), a retraction or the end goes through `update` with the whole text.
    const piece = takeAppended(slot);
    const same = sv.answerOf === slot && sv.answerEpoch === slot.answerEpoch;
    if (!(same && !done && !runEnded && sv.answerView.append(piece))) sv.answerView.update(text, done || runEnded);
    sv.answerOf = slot;
    sv.answerEpoch = slot.answerEpoch;
  }
  setAttr(sv.answer, "data-empty", (typed ? !slot.hasValue : text === "") ? "true" : null);
  setAttr(sv.answer, "data-stopped", slot.answerStopped ? "true" : null);
  setHidden(sv.stoppedMark, !slot.answerStopped);
  // A deliberate Stop is said once, by the status: the mark is "partial answer", and no "stopped" error line.
  const stopped = slot.status === "stopped" || slot.status === "running";
  const mark = stopped ? label("partial_answer_stopped") : label("partial_answer", { status: statusLabel(slot.status) });
  setText(sv.stoppedMark, slot.answerStopped ? mark : "");
  const error = slot.status === "stopped" && slot.error === "stopped" ? null : slot.error;
  setHidden(sv.error, !error);
  setText(sv.error, error ?? "");
}

function renderSlot(slot, sv, rctx, ctxKey, runEnded) {
  const key = `${slot.v}|${ctxKey}|${runEnded}`;
  if (sv.key === key) return;
  sv.key = key;
  renderSlotHead(slot, sv, runEnded);
  renderTimeline(slot, sv, rctx, ctxKey);
  renderAnswer(slot, sv, runEnded);
  const message = runEnded && rctx.onForkGo ? userMessage(slot) : null;
  sv.fork.replaceChildren(...(message === null ? [] : [forkControls({ key: `slot:${slot.name}`, target: { slot: slot.name }, what: `message of ${slot.name}`, value: message }, rctx)]));
}

/** The user message of a slot's first request (its teaching payload, OpenAI shape), or null. */
function userMessage(slot) {
  const first = slot.rounds.get(1)?.items.find((it) => it.type === "payload" && it.kind === "model_request");
  const messages = Array.isArray(first?.data?.messages) ? first.data.messages : [];
  const user = messages.filter((m) => m && m.role === "user").at(-1);
  if (!user) return null;
  if (typeof user.content === "string") return user.content;
  return Array.isArray(user.content) ? user.content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("") : null;
}

/** Render the run items and every slot. `rctx` is what item renderers read (teaching, ended, approvals). */
export function renderBody(body, state, rctx, ctxKey) {
  const { ended } = rctx;
  syncChildren(body.runItemsEl, state.run.items.map((it) => itemEl(body.runItemCache, it, rctx, ctxKey)));
  const els = [];
  for (const slot of state.slots.values()) {
    let sv = body.slotViews.get(slot.name);
    if (!sv) body.slotViews.set(slot.name, (sv = newSlotView(slot, body.now)));
    renderSlot(slot, sv, rctx, ctxKey, ended);
    els.push(sv.section);
  }
  syncChildren(body.slotsEl, els);
}
