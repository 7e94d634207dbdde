// The view's own state (what the person did, not what the run did): one object, passed around.

export function createUI(now) {
  return {
    /** Teaching view on (tool declarations, payloads, request rows shown). */
    teaching: false,
    /** The transcript format Copy and Download hand out ("openai" | "pydantic_ai" | "events"). */
    exportFormat: "openai",
    /** Stop was clicked and the run has not ended yet. */
    stopping: false,
    /** call_id → approved, for answers sent but not yet resolved by an event. */
    sentApprovals: new Map(),
    /** Bumped on every approval sent (a render key). */
    sentVersion: 0,
    /** call_id → the denial reason typed so far (kept when the card is rebuilt). */
    reasons: new Map(),
    /** Pending approvals already offered the focus (call_ids). */
    seenApprovals: new Set(),
    /** The `data-focus-key` to focus after the next render (set by Approve / Deny). */
    focusNext: null,
    /** The `data-focus-key` focused when a reset (snapshot) cleared the DOM, restored by the next render. */
    focusKept: null,
    /** The kernel clock `t` (seconds since run start) observed at local time `at` (ms). */
    elapsedAnchor: { t: 0, at: now },
    /** The largest elapsed time shown so far (the clock never runs backwards). */
    shownElapsed: 0,
    /** "Edit and re-run from here" open on one tool result or slot message: {key, target, what, value}; else null. */
    forkEdit: null,
    /** Bumped when the fork editor opens, closes or a fork is asked for (a render key). */
    forkVersion: 0,
    destroyed: false,
  };
}
