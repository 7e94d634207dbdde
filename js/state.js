// The view state of one run, built from wire events (see src/agentcell/events.py + wire.py).
//
// `reduce(state, event)` is deterministic and DOM-free. For speed on long streams it updates
// `state` in place and returns it; every object it touches gets its `v` (version) bumped so the
// renderer can redraw only what changed. Unknown kinds are counted and kept (capped) for the
// teaching view, never thrown on.

export const TERMINAL = new Set(["completed", "stopped", "halted", "budget_exhausted", "failed"]);
const TEXT_TYPES = new Set(["text", "respond", "str", ""]);
export const PAYLOAD_KINDS = new Set(["model_request", "model_response", "request_sent", "response_received"]);
const MAX_UNKNOWN = 200;

export function emptyUsage() {
  return { requests: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0, cost: null };
}

export function createState() {
  return {
    v: 0,
    started: false,
    ended: false,
    runId: null,
    model: "",
    offline: false,
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
    extra: {}, // fields of processing_complete we do not know (e.g. a future exact transcript)
    segment: 1, // run_resumed.segment: 2 after the first resume…
    context: null, // latest context_updated: {used, window, fraction, request, slot}
  };
}

export function isTextType(type) {
  return TEXT_TYPES.has(String(type ?? "").toLowerCase());
}

function newSlot(name, info) {
  return {
    v: 0,
    name,
    type: info?.type ?? "text",
    required: !!info?.required,
    useTools: !!info?.use_tools,
    index: null,
    status: "pending", // pending | running | completed | stopped | halted | budget_exhausted | failed
    rounds: new Map(), // round number -> {round, v, items: []}
    currentRound: 1,
    streamed: new Map(), // round -> text streamed as answer in that round (not yet retracted)
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

function getSlot(state, name) {
  if (name === null || name === undefined) return null;
  const key = String(name);
  let slot = state.slots.get(key);
  if (!slot) {
    slot = newSlot(key, null);
    state.slots.set(key, slot);
  }
  return slot;
}

function getRound(slot, n) {
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
function evRound(slot, n) {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) + (slot?.roundBase ?? 0) : undefined;
}

/** The round a "before the next request" item belongs to (compaction happens before a request goes out). */
function nextRound(slot) {
  const r = slot.currentRound;
  const cur = slot.rounds.get(r);
  return (cur && cur.items.length) || slot.streamed.has(r) ? r + 1 : r;
}

/** The last item of `type` in a slot's timeline (or the run items), newest first, with its round. */
function findLast(state, slotName, pred) {
  const slot = getSlot(state, slotName);
  if (!slot) {
    const items = state.run.items;
    for (let j = items.length - 1; j >= 0; j--) if (pred(items[j])) return [items[j], state.run, null];
    return [null, null, null];
  }
  const all = [...slot.rounds.values()].sort((a, b) => a.round - b.round);
  for (let i = all.length - 1; i >= 0; i--) {
    const items = all[i].items;
    for (let j = items.length - 1; j >= 0; j--) if (pred(items[j])) return [items[j], all[i], slot];
  }
  return [null, null, slot];
}

function touch(...objs) {
  for (const o of objs) if (o) o.v++;
}

/** The text a slot currently shows as its answer. */
export function slotAnswer(slot) {
  if (slot.finalText !== null && slot.finalText !== undefined && isTextType(slot.type)) return slot.finalText;
  let out = "";
  for (const r of [...slot.streamed.keys()].sort((a, b) => a - b)) out += slot.streamed.get(r);
  return out;
}

function addItem(state, slotName, item, roundNo) {
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

function findTool(state, slotName, callId) {
  const slot = getSlot(state, slotName);
  const all = slot ? [...slot.rounds.values()] : [];
  for (let i = all.length - 1; i >= 0; i--) {
    const items = all[i].items;
    for (let j = items.length - 1; j >= 0; j--) {
      if (items[j].type === "tool" && items[j].callId === callId) return [items[j], all[i], slot];
    }
  }
  return [null, null, slot];
}

function findApproval(state, slotName, callId) {
  const slots = slotName != null ? [getSlot(state, slotName)] : [...state.slots.values()];
  for (const slot of slots) {
    for (const round of slot.rounds.values()) {
      for (const it of round.items) if (it.type === "approval" && it.callId === callId) return [it, round, slot];
    }
  }
  return [null, null, null];
}

function num(x, d = 0) {
  return typeof x === "number" && Number.isFinite(x) ? x : d;
}

function normUsage(u) {
  const base = emptyUsage();
  if (!u || typeof u !== "object") return base;
  return {
    requests: num(u.requests),
    tool_calls: num(u.tool_calls),
    input_tokens: num(u.input_tokens),
    output_tokens: num(u.output_tokens),
    cost: typeof u.cost === "number" && Number.isFinite(u.cost) ? u.cost : null,
  };
}

function addUsageDelta(slot, before, after) {
  for (const k of ["requests", "tool_calls", "input_tokens", "output_tokens"]) {
    slot.usage[k] += Math.max(0, after[k] - before[k]);
  }
  if (after.cost !== null) {
    slot.usage.cost = (slot.usage.cost ?? 0) + Math.max(0, after.cost - (before.cost ?? 0));
  }
}

/** Apply one wire event. Returns `state` (updated in place). Never throws on odd input. */
export function reduce(state, ev) {
  if (!ev || typeof ev !== "object" || typeof ev.kind !== "string") return state;
  if (ev.kind === "run_started") {
    if (state.started && state.runId !== null && ev.run_id !== state.runId) {
      Object.assign(state, createState()); // a new run in the same view: start over
    }
  } else if (state.runId !== null && ev.run_id != null && ev.run_id !== "" && ev.run_id !== state.runId) {
    return state; // events of another run never mix in ("" / null: not tied to a run, e.g. widget.fail())
  }
  if (typeof ev.t === "number" && Number.isFinite(ev.t)) {
    if (state.firstT === null) state.firstT = ev.t;
    if (ev.t > state.lastT) state.lastT = ev.t;
  }
  state.v++;
  try {
    const handler = Object.hasOwn(HANDLERS, ev.kind) ? HANDLERS[ev.kind] : null;
    if (handler) handler(state, ev);
    else if (PAYLOAD_KINDS.has(ev.kind)) {
      const slot = getSlot(state, ev.slot);
      addItem(state, ev.slot, { type: "payload", v: 0, kind: ev.kind, data: ev }, evRound(slot, ev.round));
    } else {
      state.unknownCount++;
      if (state.unknown.length < MAX_UNKNOWN) state.unknown.push(ev);
    }
  } catch (err) {
    // A malformed event must not take the view down.
    console.warn("[agentcell] could not apply event", ev.kind, err);
  }
  return state;
}

function formatSummary(x) {
  try {
    return x == null ? "" : JSON.stringify(x);
  } catch {
    return String(x);
  }
}

export function replay(events, state = createState()) {
  if (Array.isArray(events)) for (const ev of events) reduce(state, ev);
  return state;
}

function startSlot(state, slot) {
  if (slot.status === "pending") slot.status = "running";
  state.currentSlot = slot.name;
}

function clearAnswer(slot) {
  slot.streamed.clear();
  slot.finalText = null;
  slot.value = undefined;
  slot.hasValue = false;
  slot.sawTokens = false;
  slot.answerStopped = false;
  slot.error = null;
  slot.answerV++;
}

const HANDLERS = {
  run_started(state, ev) {
    if (state.ended && (ev.run_id ?? null) === state.runId) {
      // The next segment of the same run (Run.resume()): keep every slot, run again.
      state.ended = false;
      state.status = "running";
      state.endT = null;
      state.earlyTermination = false;
      state.answer = undefined;
      state.extra = {}; // the exact transcript of the earlier segment no longer covers the run
    }
    state.started = true;
    state.runId = ev.run_id ?? null;
    state.model = String(ev.model ?? "");
    state.offline = !!ev.offline;
    state.limits = ev.limits && typeof ev.limits === "object" ? ev.limits : null;
    state.tools = Array.isArray(ev.tools) ? ev.tools.map(String) : [];
    state.toolSchemas = ev.tool_schemas ?? ev.tool_defs ?? null;
    if (!TERMINAL.has(state.status)) state.status = "running";
    if (Array.isArray(ev.slots)) {
      for (const info of ev.slots) {
        if (!info || info.name == null) continue;
        const s = getSlot(state, info.name);
        s.type = String(info.type ?? s.type);
        s.required = !!info.required;
        s.useTools = !!info.use_tools;
        touch(s);
      }
    }
  },
  slot_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot) return;
    if (ev.slot_type != null) slot.type = String(ev.slot_type);
    if (typeof ev.index === "number") slot.index = ev.index;
    startSlot(state, slot);
    touch(slot);
  },
  token_delta(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot || typeof ev.text !== "string") return;
    startSlot(state, slot);
    const r = getRound(slot, evRound(slot, ev.round)).round;
    slot.streamed.set(r, (slot.streamed.get(r) ?? "") + ev.text);
    slot.sawTokens = true;
    slot.answerV++;
    touch(slot);
  },
  thinking_delta(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot || typeof ev.text !== "string") return;
    startSlot(state, slot);
    const round = getRound(slot, evRound(slot, ev.round));
    const last = round.items[round.items.length - 1];
    if (last && last.type === "thinking") {
      last.text += ev.text;
      touch(last, round, slot);
    } else {
      addItem(state, ev.slot, { type: "thinking", v: 0, text: ev.text }, round.round);
    }
  },
  slot_retracted(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot) return;
    const round = getRound(slot, evRound(slot, ev.round));
    const r = round.round;
    const streamed = slot.streamed.get(r) ?? "";
    const text = typeof ev.text === "string" && ev.text !== "" ? ev.text : streamed;
    const reason = String(ev.reason ?? "");
    if (reason === "stopped") {
      // The partial answer is kept, marked stopped.
      if (!slot.streamed.has(r) && text) slot.streamed.set(r, text);
      slot.answerStopped = true;
      slot.answerV++;
      touch(slot);
      return;
    }
    slot.streamed.delete(r);
    slot.answerV++;
    if (text) {
      // Narration belongs before the tool calls of its round.
      const item = { type: "narration", v: 0, text, reason, round: r };
      const at = round.items.findIndex((it) => it.type !== "thinking" && it.type !== "narration");
      if (at === -1) round.items.push(item);
      else round.items.splice(at, 0, item);
    }
    touch(round, slot);
  },
  tool_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) startSlot(state, slot);
    const [existing] = findTool(state, ev.slot, ev.call_id);
    if (existing) return;
    addItem(
      state,
      ev.slot,
      {
        type: "tool",
        v: 0,
        callId: ev.call_id ?? null,
        name: String(ev.tool_name ?? "?"),
        args: ev.args ?? {},
        status: "running",
        result: null,
        error: null,
        cached: false,
        elapsedMs: null,
        startT: num(ev.t, null),
      },
      evRound(slot, ev.round),
    );
  },
  tool_completed(state, ev) {
    let [item, round, slot] = findTool(state, ev.slot, ev.call_id);
    if (!item) {
      item = addItem(
        state,
        ev.slot,
        { type: "tool", v: 0, callId: ev.call_id ?? null, name: String(ev.tool_name ?? "?"), args: null, startT: null },
        evRound(slot, ev.round),
      );
      [, round, slot] = findTool(state, ev.slot, ev.call_id);
    }
    const ok = ev.ok !== false;
    item.status = ok ? "ok" : "error";
    item.result = ev.result ?? "";
    item.error = ev.error ?? null;
    item.cached = !!ev.was_cached;
    item.elapsedMs = typeof ev.elapsed_ms === "number" ? ev.elapsed_ms : null;
    touch(item, round, slot);
  },
  approval_requested(state, ev) {
    const [existing] = findApproval(state, ev.slot, ev.call_id);
    if (existing) return;
    const slot = getSlot(state, ev.slot);
    addItem(
      state,
      ev.slot,
      {
        type: "approval",
        v: 0,
        callId: ev.call_id ?? null,
        name: String(ev.tool_name ?? "?"),
        args: ev.args ?? {},
        resolved: null,
      },
      evRound(slot, ev.round),
    );
  },
  approval_resolved(state, ev) {
    const [item, round, slot] = findApproval(state, ev.slot, ev.call_id);
    if (!item) return;
    item.resolved = { approved: !!ev.approved, reason: ev.reason ?? null };
    touch(item, round, slot);
  },
  retrying(state, ev) {
    const slot = getSlot(state, ev.slot);
    addItem(
      state,
      ev.slot,
      { type: "retry", v: 0, attempt: num(ev.attempt), delay: num(ev.delay_s), reason: String(ev.reason ?? "") },
      evRound(slot, ev.round),
    );
  },
  usage_updated(state, ev) {
    const after = normUsage(ev.usage);
    const slot = getSlot(state, ev.slot ?? state.currentSlot);
    if (slot) addUsageDelta(slot, state.usage, after), touch(slot);
    state.usage = after;
  },
  run_warning(state, ev) {
    const slot = getSlot(state, ev.slot);
    addItem(state, ev.slot, { type: "warning", v: 0, message: String(ev.message ?? "") }, slot?.currentRound);
  },
  guard_tripped(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) slot.status = "halted";
    addItem(state, ev.slot, { type: "guard", v: 0, reason: String(ev.reason ?? "") }, slot?.currentRound);
  },
  checkpoint_reached(state, ev) {
    const slot = getSlot(state, ev.slot);
    addItem(state, ev.slot, { type: "checkpoint", v: 0, name: ev.name ?? null }, slot?.currentRound);
  },
  slot_completed(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot) return;
    slot.status = "completed";
    slot.value = ev.value;
    slot.hasValue = true;
    // wire.py omits `text` when it equals a string `value` (a text answer is not sent twice).
    slot.finalText = typeof ev.text === "string" ? ev.text : typeof ev.value === "string" ? ev.value : null;
    slot.answerV++;
    touch(slot);
  },
  slot_failed(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot) return;
    slot.status = TERMINAL.has(ev.status) ? ev.status : "failed";
    slot.error = ev.error ?? null;
    if (typeof ev.partial === "string" && ev.partial !== "" && slotAnswer(slot) === "") {
      slot.streamed.set(slot.currentRound, ev.partial);
    }
    if (slotAnswer(slot) !== "") slot.answerStopped = true;
    slot.answerV++;
    touch(slot);
  },
  run_resumed(state, ev) {
    state.segment = Math.max(2, Math.floor(num(ev.segment, state.segment + 1)));
    const kept = Array.isArray(ev.kept) ? ev.kept.filter((k) => k != null).map(String) : [];
    const restarting = ev.restarting == null ? null : String(ev.restarting);
    if (state.ended) {
      // run_resumed without its run_started (a stream that lost it): the run goes on all the same.
      state.ended = false;
      state.status = "running";
      state.endT = null;
    }
    addItem(state, null, { type: "resumed", v: 0, segment: state.segment, kept, restarting });
    for (const name of kept) {
      const slot = getSlot(state, name);
      slot.kept = true;
      if (slot.status !== "completed") slot.status = "completed"; // its value came with an earlier segment
      touch(slot);
    }
    for (const slot of state.slots.values()) {
      if (slot.kept || slot.status === "completed" || slot.name === restarting) continue;
      if (slot.status !== "pending") {
        slot.status = "pending"; // it runs again in this segment
        clearAnswer(slot);
        touch(slot);
      }
    }
    if (restarting !== null) {
      const slot = getSlot(state, restarting);
      // Its finished rounds are kept; its partial answer is not (the engine writes it anew), and the
      // new segment numbers its rounds from 1 again: they are shown after the kept ones.
      const base = slot.rounds.size ? Math.max(...slot.rounds.keys()) : 0;
      addItem(state, restarting, { type: "resumed", v: 0, segment: state.segment }, Math.max(1, base));
      slot.roundBase = base;
      slot.kept = false;
      clearAnswer(slot);
      slot.status = "running";
      state.currentSlot = slot.name;
      touch(slot);
    }
  },
  context_updated(state, ev) {
    const used = num(ev.used_tokens);
    const window = num(ev.window);
    const fraction = typeof ev.fraction === "number" && Number.isFinite(ev.fraction) ? ev.fraction : window > 0 ? used / window : 0;
    state.context = { used, window, fraction, request: num(ev.request, null), slot: ev.slot ?? null };
  },
  compaction_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) startSlot(state, slot);
    addItem(
      state,
      ev.slot,
      { type: "compaction", v: 0, status: "running", tokens: num(ev.tokens), window: num(ev.window), messages: num(ev.messages), before: null, after: null, messagesBefore: null, messagesAfter: null, summarized: null, summary: "" },
      slot ? nextRound(slot) : undefined,
    );
  },
  compaction_finished(state, ev) {
    let [item, round, slot] = findLast(state, ev.slot, (it) => it.type === "compaction" && it.status === "running");
    if (!item) {
      slot = getSlot(state, ev.slot);
      item = addItem(state, ev.slot, { type: "compaction", v: 0, tokens: num(ev.before), window: 0, messages: num(ev.messages_before) }, slot ? nextRound(slot) : undefined);
      [, round] = findLast(state, ev.slot, (it) => it === item);
    }
    Object.assign(item, {
      status: "done",
      before: num(ev.before),
      after: num(ev.after),
      messagesBefore: num(ev.messages_before),
      messagesAfter: num(ev.messages_after),
      summarized: num(ev.summarized),
      summary: typeof ev.summary === "string" ? ev.summary : formatSummary(ev.summary),
    });
    if (state.context && state.context.slot === (ev.slot ?? null) && state.context.window > 0) {
      // Until the next request reports, the gauge shows the estimate after compaction.
      const used = item.after;
      state.context = { ...state.context, used, fraction: used / state.context.window, estimated: true };
    }
    touch(item, round, slot);
  },
  request_completed(state, ev) {
    const slot = getSlot(state, ev.slot);
    const purpose = String(ev.purpose ?? "answer");
    const u = normUsage(ev.usage);
    const item = {
      type: "request",
      v: 0,
      request: num(ev.request),
      purpose,
      latencyMs: num(ev.latency_ms, null),
      model: String(ev.model ?? ""),
      ended: String(ev.ended ?? "completed"),
      input: u.input_tokens,
      output: u.output_tokens,
      cost: u.cost,
    };
    let roundNo;
    if (purpose === "compaction") {
      // Its numbers count compactions, not rounds: it goes with the compaction marker it wrote.
      const [marker] = findLast(state, ev.slot, (it) => it.type === "compaction");
      roundNo = marker?.round ?? (slot ? nextRound(slot) : undefined);
    } else roundNo = evRound(slot, ev.request);
    addItem(state, ev.slot, item, roundNo);
  },
  processing_complete(state, ev) {
    state.ended = true;
    state.status = TERMINAL.has(ev.status) ? ev.status : "failed";
    state.earlyTermination = !!ev.early_termination;
    state.answer = ev.answer;
    if (ev.usage) state.usage = normUsage(ev.usage);
    state.endT = typeof ev.t === "number" ? ev.t : state.lastT;
    for (const [k, val] of Object.entries(ev)) {
      if (!["kind", "run_id", "slot", "status", "early_termination", "answer", "usage", "t"].includes(k)) {
        state.extra[k] = val;
      }
    }
    for (const slot of state.slots.values()) {
      if (slot.status === "running" || slot.status === "pending") {
        if (slot.status === "running") slot.status = state.status === "completed" ? "completed" : state.status;
        touch(slot);
      }
    }
  },
};

export const KNOWN_KINDS = Object.freeze([...Object.keys(HANDLERS)]);

/**
 * The status to show: a terminal trait or a terminal event wins; else running once the run has
 * started; else the trait (normally "idle").
 */
export function displayStatus(traitStatus, state) {
  if (TERMINAL.has(traitStatus)) return traitStatus;
  if (state.ended) return state.status;
  if (traitStatus === "running" || state.started) return "running";
  return traitStatus || "idle";
}

/** The usage of the slot that is running (or ran last), for the header meter. */
export function currentSlotUsage(state) {
  const slot = state.currentSlot !== null ? state.slots.get(state.currentSlot) : null;
  return slot ? slot.usage : emptyUsage();
}
