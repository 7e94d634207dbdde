// The view state of one run, built from wire events (see src/agentcell/events/run.py + events/json.py).
// Public face of js/src/state/: core (state + shared helpers), one handler module per concern
// (run, slots, tools, long-runs), reduce (dispatch), json (the canonical transcript JSON).
export { createState, emptyUsage, isTextType, PAYLOAD_KINDS, slotAnswer, sortedRounds, takeAppended, TERMINAL } from "./state/core.js";
export { appendCoalesced, currentSlotMeters, currentSlotUsage, displayStatus, KNOWN_KINDS, reduce, replay, shownOutputTokens } from "./state/reduce.js";
export { transcriptJSON } from "./state/json.js";
export { pendingApprovals } from "./state/tools.js";
