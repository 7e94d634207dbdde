// The teaching panel, on top of the run when the Teaching view is on: what the model was offered
// (each tool as a Python signature with its docstring, the JSON schema one toggle away), then the loop
// round by round in three lanes with agentcell's interventions as markers (teach/lanes.js), each round's
// wire in the chosen format (teach/wire.js), and the events this widget does not know yet.
import { formatJSON, plural, serverNote } from "../format.js";
import { h, preBlock, swap, syncChildren } from "../render/dom.js";
import { lessonSlot, offeredTools } from "../teach/lesson.js";
import { roundEl, laneHeads } from "../teach/lanes.js";
import { markerEl } from "../teach/bits.js";
import { pythonSource } from "../teach/signature.js";
import { contextStrip, formatSwitch, wireRound } from "../teach/wire.js";
import { sourceEl } from "../teach/source.js";
import { timelineEl } from "../teach/timeline.js";

function toolDeclaration(t) {
  const known = t.schema !== undefined;
  return h(
    "li",
    { class: "agentcell-tool-decl", data: { tool: t.name } },
    h("span", { class: "agentcell-tool-name" }, t.name),
    t.server ? h("span", { class: "agentcell-tool-server" }, ` · ${serverNote(t.server)}`) : null,
    known ? h("pre", { class: "agentcell-pre ac-signature", aria: { label: `Python signature of ${t.name}` } }, pythonSource(t.name, t.description, t.schema)) : null,
    !known && t.description ? h("div", { class: "agentcell-tool-description" }, t.description) : null,
    known
      ? h(
          "details",
          { class: "agentcell-collapse agentcell-tool-schema", data: { part: `schema-${t.name}`, tool: t.name } },
          h("summary", { class: "agentcell-collapse-summary" }, "JSON schema (what the model is sent)"),
          preBlock("agentcell-pre agentcell-tool-schema-json", formatJSON(t.schema)),
        )
      : null,
  );
}

/** run_started.tools + run_started.tool_schemas → the "offered" list (signature, docstring, schema). */
export function toolDeclarations(tools, schemas) {
  const list = offeredTools({ tools, toolSchemas: schemas });
  const n = list.length;
  const out = [h("div", { class: "agentcell-label" }, n ? `${plural(n, "tool")} offered to the model:` : "no tools offered")];
  if (n) out.push(h("ul", { class: "agentcell-tool-list" }, list.map(toolDeclaration)));
  const structured = Array.isArray(schemas) && schemas.every((s) => s && typeof s === "object" && !Array.isArray(s));
  if (schemas != null && !structured) out.push(preBlock("agentcell-pre agentcell-tool-schemas", formatJSON(schemas)));
  return out;
}

export function buildTeaching() {
  const toolsEl = h("div", { class: "agentcell-teach-tools" });
  const switchEl = h("div", { class: "ac-format-slot" });
  const loopEl = h("div", { class: "ac-lesson" });
  const unknownEl = h("div", { class: "agentcell-teach-unknown" });
  const sourceSlot = h("div", { class: "ac-source-slot" });
  const timelineSlot = h("div", { class: "ac-timeline-slot" });
  const el = h(
    "div",
    { class: "agentcell-teaching agentcell-teach-only" },
    h("h3", { class: "agentcell-teach-title" }, "Teaching view"),
    sourceSlot,
    h("section", { class: "ac-offer", aria: { label: "what the model was offered" } }, h("h4", { class: "ac-section-title" }, "What the model was offered"), toolsEl),
    h("section", { class: "ac-loop", aria: { label: "the loop, round by round" } }, h("h4", { class: "ac-section-title" }, "The loop, round by round"), switchEl, loopEl),
    timelineSlot,
    unknownEl,
  );
  // What was drawn last: redrawn only when it changes, so the reader's open/closed <details> stay put.
  return { el, toolsEl, switchEl, loopEl, unknownEl, sourceSlot, timelineSlot, key: {}, format: "openai", slotEls: new Map(), redraw: null };
}

function slotLesson(state, slot, tp) {
  const lesson = lessonSlot(state, slot);
  const ctx = { model: state.model, tools: offeredTools(state) };
  const rounds = lesson.rounds.map((r) => {
    const part = `lesson-${slot.name}-${r.round}`;
    const el = roundEl(r, part);
    el.append(wireRound(r, tp.format, ctx, `${part}-wire`));
    return el;
  });
  return h(
    "section",
    { class: "ac-lesson-slot", data: { slot: slot.name }, aria: { label: `the loop of slot ${slot.name}` } },
    h("h4", { class: "ac-lesson-slot-title" }, `slot ${slot.name} `, h("span", { class: "ac-caption" }, `${slot.type} · ${plural(lesson.rounds.length, "round")}`)),
    laneHeads(),
    rounds,
    lesson.markers.map((m) => markerEl(m, `lesson-${slot.name}-slot`)),
    contextStrip(lesson, state.context?.windowKnown === false ? 0 : state.context?.window ?? 0), // 0: tokens only
  );
}

function renderLoop(tp, state) {
  const els = [];
  for (const slot of state.slots.values()) {
    if (!slot.rounds.size && slot.status === "pending") continue;
    const k = `${slot.v}|${slot.answerV}|${slot.status}|${tp.format}|${state.tools.length}|${state.context?.window ?? 0}`;
    const hit = tp.slotEls.get(slot.name);
    if (hit && hit.key === k) {
      els.push(hit.el);
      continue;
    }
    const next = slotLesson(state, slot, tp);
    if (hit) swap(hit.el, next);
    tp.slotEls.set(slot.name, { el: next, key: k });
    els.push(next);
  }
  syncChildren(tp.loopEl, els);
}

/**
 * After a new wire format was picked, open each slot's latest round's wire (the others keep their state and
 * already show the new format): the format only changes folded sections, so a click that opened nothing
 * looked like it did nothing.
 */
function openLastWires(loopEl) {
  for (const slot of loopEl.querySelectorAll(".ac-lesson-slot")) {
    const wires = slot.querySelectorAll("details.ac-wire");
    if (wires.length) wires[wires.length - 1].open = true;
  }
}

function renderSwitch(tp) {
  const pick = (fmt) => {
    tp.format = fmt;
    tp.openWire = true; // the choice opens what it changes (renderTeaching)
    tp.redraw?.();
  };
  syncChildren(tp.switchEl, [formatSwitch(tp.format, pick)]);
}

/** The lesson-mode parts: the cell at the top (the `source` trait), the timeline under the loop. */
function renderLessonParts(tp, state, more) {
  const key = tp.key;
  if (key.source !== more.source) {
    key.source = more.source;
    const el = sourceEl(more.source);
    syncChildren(tp.sourceSlot, el ? [el] : []);
  }
  if (key.timelineV !== state.v && Array.isArray(more.events)) {
    key.timelineV = state.v;
    const el = timelineEl(more.events);
    syncChildren(tp.timelineSlot, el ? [el] : []);
  }
}

export function renderTeaching(tp, state, teaching, more = {}) {
  if (tp.key.state !== state) {
    tp.key = { state }; // a reset or a new run: draw the panel anew
    tp.slotEls = new Map();
  }
  if (!teaching) return;
  renderLessonParts(tp, state, more);
  const key = tp.key;
  if (key.tools !== state.tools || key.schemas !== state.toolSchemas) {
    key.tools = state.tools;
    key.schemas = state.toolSchemas;
    syncChildren(tp.toolsEl, toolDeclarations(state.tools, state.toolSchemas));
  }
  if (key.format !== tp.format) {
    key.format = tp.format;
    renderSwitch(tp);
  }
  if (key.v !== state.v || key.drawnFormat !== tp.format) {
    key.v = state.v;
    key.drawnFormat = tp.format;
    renderLoop(tp, state);
  }
  if (tp.openWire) {
    tp.openWire = false;
    openLastWires(tp.loopEl);
  }
  if (key.unknown !== state.unknownCount) {
    key.unknown = state.unknownCount;
    if (state.unknown.length) {
      syncChildren(tp.unknownEl, [
        h("div", { class: "agentcell-label" }, `events this widget does not know yet (${state.unknownCount}):`),
        preBlock("agentcell-pre", formatJSON(state.unknown)),
      ]);
    } else tp.unknownEl.replaceChildren();
  }
}
