// Handlers for a slot's answer: start, streamed text and thinking, retraction, completion, failure.
import { addItem, answerChanged, evRound, getRound, getSlot, slotAnswer, startSlot, TERMINAL, touch } from "./core.js";

/** Whether text streamed in round `r` goes at the end of the answer (no later round has streamed). */
function atEnd(slot, r) {
  for (const k of slot.streamed.keys()) if (k > r) return false;
  return true;
}

function retract(slot, round, ev) {
  answerChanged(slot);
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
}

export const SLOT_HANDLERS = {
  slot_started(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot) return;
    if (ev.slot_type != null) slot.type = String(ev.slot_type);
    if (typeof ev.index === "number") slot.index = ev.index;
    if (ev.limits && typeof ev.limits === "object" && !Array.isArray(ev.limits)) slot.limits = ev.limits;
    startSlot(state, slot);
    touch(slot);
  },
  token_delta(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot || typeof ev.text !== "string") return;
    startSlot(state, slot);
    const r = getRound(slot, evRound(slot, ev.round)).round;
    if (atEnd(slot, r)) slot.answerLog.push(ev.text);
    else answerChanged(slot);
    slot.streamed.set(r, (slot.streamed.get(r) ?? "") + ev.text);
    state.pendingOut += ev.text.length;
    slot.sawTokens = true;
    slot.answerV++;
    touch(slot);
  },
  thinking_delta(state, ev) {
    const slot = getSlot(state, ev.slot);
    if (!slot || typeof ev.text !== "string") return;
    startSlot(state, slot);
    state.pendingOut += ev.text.length;
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
    retract(slot, getRound(slot, evRound(slot, ev.round)), ev);
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
      answerChanged(slot);
    }
    if (slotAnswer(slot) !== "") slot.answerStopped = true;
    slot.answerV++;
    touch(slot);
  },
};
