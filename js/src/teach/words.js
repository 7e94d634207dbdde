// The teaching view's words, from src/agentcell/teaching.json (the Python static twin reads the same file).
import words from "../../../src/agentcell/teaching.json";

export { words };

/** The words of one marker kind: {title, say, why}. */
export function markerWords(kind) {
  return Object.hasOwn(words.markers, kind) ? words.markers[kind] : { title: kind.replace(/_/g, " "), say: "", why: "" };
}

/** Why the tools were withheld, in words: "this is the slot's last permitted request (max_iter=3)". */
export function finalReason(reason, n) {
  const t = Object.hasOwn(words.final_round_reason, reason) ? words.final_round_reason[reason] : words.final_round_reason.other;
  return t.replace("{n}", String(n ?? "?"));
}

export const LANES = ["tools", "agentcell", "model"];
