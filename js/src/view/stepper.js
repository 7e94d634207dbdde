// Lesson mode's step bar: shown while a stepped run (`%%agent --step`) waits at a pause. It says what is
// next ("paused before request 2: 4 messages, 1 tool offered"), shows the exact request body or the
// call's arguments, asks the prediction when the run was started with --predict, and offers Next, Run to
// end and Stop. Next sends {kind:"step"}, Run to end {kind:"go"}, a guess {kind:"predict", does, tool}
// (python: frontends/widget/widget.py). Native buttons and radio inputs: keyboard operable as they are;
// the bar stays in place (Next disabled) between pauses so the focus stays on it.
import { formatJSON } from "../format.js";
import { h, setAttr, setHidden, setText, syncChildren } from "../render/dom.js";
import { rebuildRequests } from "../teach/messages.js";

/** The open pause (the last step_paused without its step_resumed) and whether the run was ever stepped. */
export function pauseOf(events, ended) {
  let open = null;
  let stepped = false;
  let going = false;
  for (const ev of events) {
    if (ev?.kind === "step_paused") {
      open = ev;
      stepped = true;
    } else if (ev?.kind === "step_resumed") {
      if (open && ev.number === open.number) open = null;
      if (ev.how === "go") going = true;
    }
  }
  return { pause: ended ? null : open, stepped: stepped && !going && !ended };
}

/** What the run is about to send: the whole request rebuilt from the slot's model_request payloads. */
function requestBody(events, pause, model) {
  const payloads = events.filter((ev) => ev?.kind === "model_request" && ev.slot === pause.slot);
  const rebuilt = rebuildRequests(payloads);
  const last = rebuilt[rebuilt.length - 1];
  if (!last) return null;
  const body = { model, messages: last.messages };
  if (Array.isArray(last.data?.tools) && last.data.tools.length) body.tools = last.data.tools;
  return body;
}

export function buildStepper() {
  const sp = {
    summaryEl: h("p", { class: "ac-step-summary", role: "status", "aria-live": "polite" }),
    detailEl: h("div", { class: "ac-step-detail" }),
    predictEl: h("div", { class: "ac-step-predict" }),
    verdictEl: h("p", { class: "ac-guess-verdict", hidden: true }),
    nextBtn: h("button", { type: "button", class: "agentcell-btn ac-step-next", aria: { label: "Next: go on to the next pause" }, data: { "focus-key": "step:next" } }, "Next"),
    goBtn: h("button", { type: "button", class: "agentcell-btn ac-step-go", aria: { label: "Run to end: stop pausing" }, data: { "focus-key": "step:go" } }, "Run to end"),
    stopBtn: h("button", { type: "button", class: "agentcell-btn ac-step-stop", aria: { label: "Stop the stepped run" }, data: { "focus-key": "step:stop" } }, "Stop"),
    key: "",
  };
  const actions = h("div", { class: "ac-step-actions" }, sp.nextBtn, sp.goBtn, sp.stopBtn);
  // JupyterLab's notebook shortcuts (arrows move between cells, Enter edits) must not take the bar's keys.
  sp.el = h("section", { class: "ac-stepper", aria: { label: "step through the run" }, data: { "lm-suppress-shortcuts": "true" }, hidden: true }, sp.summaryEl, sp.verdictEl, sp.predictEl, actions, sp.detailEl);
  return sp;
}

const GUESSES = [
  ["answer", "answer", "the model answers"],
  ["tool", "call a tool", "the model calls a tool"],
  ["both", "both", "the model says something and calls a tool"],
];

// Buttons, not radios: a radio group moves with the arrow keys, which JupyterLab takes for moving
// between cells; buttons are reached with Tab and pressed with Enter or Space anywhere.
function predictForm(pause, guess, tools, onGuess) {
  const choice = ([value, text, said]) =>
    h(
      "button",
      { type: "button", class: "agentcell-btn ac-guess-btn", aria: { pressed: guess?.does === value ? "true" : "false", label: `Guess: ${said}` }, data: { "focus-key": `guess:${value}`, guess: value }, on: { click: () => onGuess(value, guess?.tool ?? tools[0] ?? null) } },
      text,
    );
  const select = h(
    "select",
    { class: "ac-guess-tool", aria: { label: "which tool" }, data: { "focus-key": "guess:which" }, disabled: !tools.length, on: { change: (ev) => onGuess(guess?.does === "answer" || !guess ? "tool" : guess.does, ev.target.value) } },
    tools.map((t) => h("option", { value: t, selected: guess?.tool === t ? true : null }, t)),
  );
  return h(
    "fieldset",
    { class: "ac-guess" },
    h("legend", {}, "What will the model do?"),
    GUESSES.map(choice),
    h("label", { class: "ac-guess-choice" }, " which tool: ", select),
    guess ? h("p", { class: "ac-guess-said" }, `Your guess: ${guess.does}${guess.does !== "answer" && guess.tool ? ` (${guess.tool})` : ""}. Press Next to see.`) : null,
  );
}

function doing(d) {
  if (!d || typeof d !== "object") return "?";
  if (d.does === "answer") return "answer";
  return `${d.does === "both" ? "say something and call" : "call"} ${d.tool ?? "a tool"}`;
}

/** The reveal of the latest guess: right or wrong, and what the model did. */
function renderVerdict(sp, events) {
  const last = events.findLast((ev) => ev?.kind === "prediction");
  setHidden(sp.verdictEl, !last);
  if (!last) return;
  setText(sp.verdictEl, `Request ${last.round}: your guess “${doing(last.guess)}” was ${last.right ? "right" : "wrong"}: the model chose to ${doing(last.actual)}.`);
  setAttr(sp.verdictEl, "data-right", last.right ? "true" : "false");
}

/** Draw the bar for `events` (the store's); `ctx.ui.guesses` keeps what was guessed per pause. */
export function renderStepper(sp, ctx, events, ended) {
  const { pause, stepped } = pauseOf(events, ended);
  setHidden(sp.el, !stepped);
  if (!stepped) return;
  renderVerdict(sp, events);
  const guess = pause ? ctx.ui.guesses?.get(pause.number) : null;
  const key = pause ? `${pause.number}|${guess?.does ?? ""}|${guess?.tool ?? ""}` : "running";
  const waiting = !pause;
  setAttr(sp.nextBtn, "aria-disabled", waiting ? "true" : null);
  setAttr(sp.goBtn, "aria-disabled", null);
  if (key === sp.key) return;
  sp.key = key;
  if (!pause) {
    setText(sp.summaryEl, "running to the next pause…");
    syncChildren(sp.detailEl, []);
    syncChildren(sp.predictEl, []);
    return;
  }
  setText(sp.summaryEl, String(pause.summary ?? "paused"));
  const value = pause.before === "tool" ? { [pause.tool_name ?? "tool"]: pause.args ?? {} } : requestBody(events, pause, ctx.store.state.model);
  const what = pause.before === "tool" ? "the call's arguments" : "the request body about to be sent";
  syncChildren(sp.detailEl, [
    h("details", { class: "agentcell-collapse ac-step-body", open: true, data: { part: "step-body" } },
      h("summary", { class: "agentcell-collapse-summary" }, what),
      h("pre", { class: "agentcell-pre", tabindex: "0", aria: { label: what } }, formatJSON(value))),
  ]);
  const tools = Array.isArray(pause.tools) ? pause.tools : [];
  syncChildren(sp.predictEl, pause.predict ? [predictForm(pause, guess, tools, (does, tool) => ctx.guess(pause, does, tool))] : []);
}

/** Next, Run to end, Stop and the guesses: each tells Python and re-renders. */
export function wireStepper(sp, ctx) {
  ctx.ui.guesses = new Map();
  sp.nextBtn.addEventListener("click", () => {
    if (sp.nextBtn.getAttribute("aria-disabled") === "true") return;
    ctx.send({ kind: "step" });
    ctx.ui.focusNext = "step:next";
    sp.key = "";
    ctx.schedule();
  });
  sp.goBtn.addEventListener("click", () => {
    ctx.send({ kind: "go" });
    ctx.schedule();
  });
  sp.stopBtn.addEventListener("click", () => {
    ctx.send({ kind: "stop" });
    ctx.ui.stopping = true;
    ctx.schedule();
  });
  ctx.guess = (pause, does, tool) => {
    const guess = { does, tool: does === "answer" ? null : tool };
    ctx.ui.guesses.set(pause.number, guess);
    ctx.send({ kind: "predict", does, tool: guess.tool });
    ctx.ui.focusNext = `guess:${does}`;
    ctx.schedule();
  };
}
