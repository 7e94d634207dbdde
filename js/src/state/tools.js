// Handlers for tool calls and approvals.
import { addItem, evRound, getSlot, num, startSlot, touch } from "./core.js";

/** The newest tool card with `callId` in a slot (rounds in the order they were created). */
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

/** The approval with `callId` in a slot, or in any slot when the event names none. */
function findApproval(state, slotName, callId) {
  const slots = slotName != null ? [getSlot(state, slotName)] : [...state.slots.values()];
  for (const slot of slots) {
    for (const round of slot.rounds.values()) {
      for (const it of round.items) if (it.type === "approval" && it.callId === callId) return [it, round, slot];
    }
  }
  return [null, null, null];
}

function toolItem(ev, fields) {
  const server = typeof ev.server === "string" ? { server: ev.server } : {}; // an MCP server's tool
  return { type: "tool", v: 0, callId: ev.call_id ?? null, name: String(ev.tool_name ?? "?"), ...server, ...fields };
}

export const TOOL_HANDLERS = {
  tool_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (slot) startSlot(state, slot);
    const [existing] = findTool(state, ev.slot, ev.call_id);
    if (existing) return;
    const item = toolItem(ev, {
      args: ev.args ?? {},
      status: "running",
      result: null,
      error: null,
      cached: false,
      elapsedMs: null,
      startT: num(ev.t, null),
    });
    addItem(state, ev.slot, item, evRound(slot, ev.round));
  },
  tool_completed(state, ev) {
    let [item, round, slot] = findTool(state, ev.slot, ev.call_id);
    if (!item) {
      item = addItem(state, ev.slot, toolItem(ev, { args: null, startT: null }), evRound(slot, ev.round));
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
    const server = typeof ev.server === "string" ? { server: ev.server } : {}; // as on the tool card
    const item = { type: "approval", v: 0, callId: ev.call_id ?? null, name: String(ev.tool_name ?? "?"), ...server, args: ev.args ?? {}, resolved: null };
    addItem(state, ev.slot, item, evRound(slot, ev.round));
  },
  /** A slot's toolsets described their tools (an MCP server's): merged into `toolSchemas` as a new list, one entry a name. */
  tools_listed(state, ev) {
    const listed = (Array.isArray(ev.tool_schemas) ? ev.tool_schemas : []).filter((s) => s && typeof s === "object" && !Array.isArray(s));
    if (!listed.length) return;
    const names = new Set(listed.map((s) => String(s.name ?? "?")));
    const kept = Array.isArray(state.toolSchemas) ? state.toolSchemas.filter((s) => !(s && typeof s === "object" && names.has(s.name))) : [];
    state.toolSchemas = [...kept, ...listed];
  },
  approval_resolved(state, ev) {
    const [item, round, slot] = findApproval(state, ev.slot, ev.call_id);
    if (!item) return;
    item.resolved = { approved: !!ev.approved, reason: ev.reason ?? null };
    touch(item, round, slot);
  },
};

/** Approval items not answered yet (no `approval_resolved`), run items first, then slot by slot, round by round. */
export function pendingApprovals(state) {
  const out = state.run.items.filter((it) => it.type === "approval" && !it.resolved);
  for (const slot of state.slots.values()) {
    for (const round of slot.rounds.values()) for (const it of round.items) if (it.type === "approval" && !it.resolved) out.push(it);
  }
  return out;
}
