// The header's meters of a run of several slots: the running slot keeps its bars (view/header.js); every
// other slot that ran gets a compact "name requests/limit · calls/limit" beside them, so a finished run of
// three slots shows all three, not only the last one's.
import { h, setAttr, syncChildren } from "../render/dom.js";

export function buildSlotMeters() {
  return h("span", { class: "agentcell-slot-meters", hidden: true });
}

function limitText(used, limit) {
  return Number.isFinite(limit) && limit > 0 ? `${used}/${limit}` : String(used);
}

/** One compact meter per slot that ran, except `current` (shown with bars); hidden for a one-slot run. */
export function renderSlotMeters(el, state, current) {
  const others = [...state.slots.values()].filter((s) => s.name !== current && (s.usage.requests > 0 || s.usage.tool_calls > 0));
  const key = others.map((s) => `${s.name}:${s.usage.requests}:${s.usage.tool_calls}:${s.limits?.requests}:${s.limits?.tool_calls}`).join("|");
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.hidden = others.length === 0;
  syncChildren(
    el,
    others.map((s) => {
      const limits = s.limits ?? state.limits ?? {};
      const req = limitText(s.usage.requests, limits.requests);
      const calls = limitText(s.usage.tool_calls, limits.tool_calls);
      const item = h(
        "span",
        { class: "agentcell-slot-meter", data: { slot: s.name }, title: `slot ${s.name}: ${req} requests, ${calls} tool calls` },
        h("span", { class: "agentcell-meter-label" }, `slot ${s.name}:`),
        ` requests ${req} · tool calls ${calls}`,
      );
      setAttr(item, "data-requests", s.usage.requests);
      return item;
    }),
  );
}
