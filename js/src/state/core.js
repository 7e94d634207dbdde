// The reducer's state and the helpers every handler shares (DOM-free; it imports only two generated JSON files).
//
// Objects a handler touches get their `v` (version) bumped so the renderer redraws only what changed.
//
// The statuses and item types are the Python `Literal` types (src/agentcell/usage.py,
// src/agentcell/transcript/items.py), written to literals.json by scripts/write_literals.py: one list
// of final statuses for both languages.
import { shown_as_text as shownAsText } from "../../../src/agentcell/slot_kinds.json";
import literals from "../../../src/agentcell/transcript/literals.json";

/** How a run or slot ends (Python's `RunStatus`). */
export const TERMINAL = new Set(literals.final_statuses);
/**
 * Slot types whose answer is free text, shown as Markdown (`think`, `poem`, …, their aliases, and "" for none
 * said). From slot_kinds.json, written from src/agentcell/template/kinds.py and read by the Python reducer too.
 */
const TEXT_TYPES = new Set(shownAsText);
/** Teaching payloads: kept as `payload` items in their round, not interpreted. */
export const PAYLOAD_KINDS = new Set(literals.payload_kinds);

/*
 * The items of a round (or run), a union discriminated by `type`: the Python `Item` of
 * src/agentcell/transcript/items.py, with camelCase where `itemJSON` (json.js) renames a key, `v` the
 * version, `round` set by `addItem` for slot items. `text` of a thinking item grows by `+=`.
 *
 * @typedef {"completed"|"stopped"|"halted"|"budget_exhausted"|"failed"} RunStatus
 * @typedef {"pending"|"running"|RunStatus} SlotStatus
 * @typedef {"idle"|"running"|RunStatus} LiveStatus
 * @typedef {{v: number, round?: number}} ItemBase
 * @typedef {ItemBase & {type: "thinking", text: string}} ThinkingItem
 * @typedef {ItemBase & {type: "narration", text: string, reason: string}} NarrationItem
 * @typedef {ItemBase & {type: "tool", callId: any, name: string, args: any, status: "running"|"ok"|"error",
 *   result: any, error: any, cached: boolean, elapsedMs: number|null, startT: number|null}} ToolItem
 * @typedef {ItemBase & {type: "approval", callId: any, name: string, args: any,
 *   resolved: null|{approved: boolean, reason: string|null}}} ApprovalItem
 * @typedef {ItemBase & {type: "retry", attempt: number, delay: number, reason: string}} RetryItem
 * @typedef {ItemBase & {type: "warning", message: string}} WarningItem
 * @typedef {ItemBase & {type: "guard", reason: string}} GuardItem
 * @typedef {ItemBase & {type: "checkpoint", name: any}} CheckpointItem
 * @typedef {ItemBase & {type: "resumed", segment: number, kept?: string[], restarting?: string|null}} ResumedItem
 * @typedef {ItemBase & {type: "compaction", status: "running"|"done", tokens: number, window: number,
 *   messages: number, before: number|null, after: number|null, messagesBefore: number|null,
 *   messagesAfter: number|null, summarized: number|null, summary: string}} CompactionItem
 * @typedef {ItemBase & {type: "request", request: number, purpose: string, latencyMs: number|null, model: string,
 *   ended: string, input: number, output: number, cost: number|null}} RequestItem
 * @typedef {ItemBase & {type: "payload", kind: string, data: object}} PayloadItem
 * @typedef {ThinkingItem|NarrationItem|ToolItem|ApprovalItem|RetryItem|WarningItem|GuardItem|CheckpointItem
 *   |ResumedItem|CompactionItem|RequestItem|PayloadItem} Item
 * @typedef {{requests: number, tool_calls: number, input_tokens: number, output_tokens: number,
 *   cost: number|null}} Usage
 */
export const MAX_UNKNOWN = 200;

/** @returns {Usage} */
export function emptyUsage() {
  return { requests: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0, cost: null, estimated: false };
}

export function createState() {
  return {
    v: 0,
    pendingOut: 0, // characters streamed since the provider last reported usage (the token estimate)
    started: false,
    ended: false,
    runId: null,
    model: "",
    offline: false,
    offlineChosen: false, // run_started.offline_chosen: the user picked the offline model (not the default)
    limits: null,
    tools: [],
    toolSchemas: null,
    status: "idle",
    earlyTermination: false,
    answer: undefined,
    firstT: null,
    lastT: 0,
    endT: null,
    usage: emptyUsage(),
    slots: new Map(), // name -> slot, insertion order = display order
    run: { v: 0, items: [] }, // run-level items (slot null): warnings, retries, checkpoints
    currentSlot: null,
    unknown: [],
    unknownCount: 0,
    extra: {}, // fields of processing_complete we do not know (e.g. the exact transcript)
    segment: 1, // run_resumed.segment: 2 after the first resume…
    context: null, // latest context_updated: {used, window, fraction, request, slot}
    thumbs: new Map(), // digest -> thumbnail data URI (media_added sends each once); not in the JSON
  };
}

export function isTextType(type) {
  return TEXT_TYPES.has(String(type ?? "").toLowerCase());
}

export function newSlot(name, info) {
  return {
    v: 0,
    name,
    type: info?.type ?? "text",
    required: !!info?.required,
    useTools: !!info?.use_tools,
    index: null,
    limits: null, // slot_started.limits: this slot's effective ceiling (its max_iter within the run's)
    status: "pending", // a SlotStatus
    rounds: new Map(), // round number -> {round, v, items: []}
    currentRound: 1,
    streamed: new Map(), // round -> text streamed as answer in that round (not yet retracted)
    // The deltas appended to the end of the answer since a view last took them (`takeAppended`), while
    // `answerEpoch` stays the same; any other change to the answer bumps it (`answerChanged`).
    answerLog: [],
    answerEpoch: 0,
    answerV: 0,
    answerStopped: false,
    finalText: null, // slot_completed.text
    value: undefined,
    hasValue: false,
    error: null,
    usage: emptyUsage(),
    sawTokens: false,
    kept: false, // run_resumed.kept: the value comes from an earlier segment
    roundBase: 0, // a resumed slot numbers its rounds from 1 again: shown after the earlier ones
  };
}

export function getSlot(state, name) {
  if (name === null || name === undefined) return null;
  const key = String(name);
  let slot = state.slots.get(key);
  if (!slot) {
    slot = newSlot(key, null);
    state.slots.set(key, slot);
  }
  return slot;
}

export function getRound(slot, n) {
  const r = Number.isFinite(n) && n > 0 ? Math.floor(n) : slot.currentRound;
  let round = slot.rounds.get(r);
  if (!round) {
    round = { round: r, v: 0, items: [] };
    slot.rounds.set(r, round);
  }
  if (r > slot.currentRound) slot.currentRound = r;
  return round;
}

/** The view's round number for an event's `round` (or `request`) field; undefined when it has none. */
export function evRound(slot, n) {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) + (slot?.roundBase ?? 0) : undefined;
}

/** The round a "before the next request" item belongs to (compaction happens before a request goes out). */
export function nextRound(slot) {
  const r = slot.currentRound;
  const cur = slot.rounds.get(r);
  return (cur && cur.items.length) || slot.streamed.has(r) ? r + 1 : r;
}

/** A slot's rounds in ascending round order. */
export function sortedRounds(slot) {
  return [...slot.rounds.values()].sort((a, b) => a.round - b.round);
}

/** The last item matching `pred` in a slot's timeline (or the run items), newest first, with its round. */
export function findLast(state, slotName, pred) {
  const slot = getSlot(state, slotName);
  if (!slot) {
    const items = state.run.items;
    for (let j = items.length - 1; j >= 0; j--) if (pred(items[j])) return [items[j], state.run, null];
    return [null, null, null];
  }
  const all = sortedRounds(slot);
  for (let i = all.length - 1; i >= 0; i--) {
    const items = all[i].items;
    for (let j = items.length - 1; j >= 0; j--) if (pred(items[j])) return [items[j], all[i], slot];
  }
  return [null, null, slot];
}

export function touch(...objs) {
  for (const o of objs) if (o) o.v++;
}

/** The text a slot currently shows as its answer. */
export function slotAnswer(slot) {
  if (slot.finalText !== null && slot.finalText !== undefined && isTextType(slot.type)) return slot.finalText;
  let out = "";
  for (const r of [...slot.streamed.keys()].sort((a, b) => a - b)) out += slot.streamed.get(r);
  return out;
}

/**
 * The text appended to the end of the slot's answer since the last call, forgotten once taken. A view
 * reads it instead of the whole answer: the answer is built by `+=` (a rope), and reading it whole
 * (`includes`, `startsWith`, `slice`) copies all of it, at every frame.
 */
export function takeAppended(slot) {
  const log = slot.answerLog;
  if (log.length === 0) return "";
  const text = log.length === 1 ? log[0] : log.join("");
  log.length = 0;
  return text;
}

/** The answer changed other than by growing at its end (a retraction, a partial answer, a cleared slot). */
export function answerChanged(slot) {
  slot.answerEpoch++;
  slot.answerLog.length = 0;
}

export function addItem(state, slotName, item, roundNo) {
  const slot = getSlot(state, slotName);
  if (!slot) {
    state.run.items.push(item);
    touch(state.run);
    return item;
  }
  const round = getRound(slot, roundNo);
  item.round = round.round;
  round.items.push(item);
  touch(round, slot);
  return item;
}

export function num(x, d = 0) {
  return typeof x === "number" && Number.isFinite(x) ? x : d;
}

export function normUsage(u) {
  const base = emptyUsage();
  if (!u || typeof u !== "object") return base;
  return {
    requests: num(u.requests),
    tool_calls: num(u.tool_calls),
    input_tokens: num(u.input_tokens),
    output_tokens: num(u.output_tokens),
    cost: typeof u.cost === "number" && Number.isFinite(u.cost) ? u.cost : null,
    estimated: u.estimated === true,
  };
}

export function startSlot(state, slot) {
  if (slot.status === "pending") slot.status = "running";
  state.currentSlot = slot.name;
}

export function clearAnswer(slot) {
  slot.streamed.clear();
  answerChanged(slot);
  slot.finalText = null;
  slot.value = undefined;
  slot.hasValue = false;
  slot.sawTokens = false;
  slot.answerStopped = false;
  slot.error = null;
  slot.answerV++;
}
