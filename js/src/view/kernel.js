// The kernel went away while the run was going (restarted, or shut down): the view says so, once.
//
// JupyterLab's (and Notebook 7's) widget manager marks every model of a restarting kernel "not live"
// (`comm_live = false`), which Backbone announces as `comm_live_update`; anywidget's model passes the
// event name through to the model it wraps. Nothing else of the run can reach the view after that: the
// run's task died with the kernel, so without this the view showed "running" with a clock that kept
// counting and a Stop that could do nothing. The journal still has every event the run wrote, so
// `%agent show RUN_ID` rebuilds it.
import { displayStatus, slotAnswer, TERMINAL } from "../state.js";
import { label } from "../format.js";

/** The view's own status for a run whose kernel went away before it ended (not a run status). */
export const LOST = "lost";

/** Listen for the kernel going away; returns the function that stops listening. */
export function watchKernel(ctx) {
  const gone = () => {
    if (ctx.ui.destroyed || ctx.ui.kernelGone) return;
    ctx.ui.kernelGone = true;
    ctx.schedule();
  };
  ctx.model.on("comm_live_update", gone);
  return () => ctx.model.off("comm_live_update", gone);
}

/** The status the view shows: the run's, or `LOST` once its kernel went away before it ended. */
export function viewStatus(ctx) {
  const status = displayStatus(ctx.model.get("status"), ctx.store.state);
  if (!ctx.ui.kernelGone || TERMINAL.has(status) || ctx.store.state.ended) return status;
  return LOST;
}

/** Words of every slot's answer the view holds (what the reader keeps of a lost run). */
export function wordsKept(state) {
  let n = 0;
  for (const slot of state.slots.values()) {
    const text = slotAnswer(slot);
    if (text) n += text.split(/\s+/).filter(Boolean).length;
  }
  return n;
}

/** "kernel restarted — this run was lost; 42 words kept". */
export function lostText(state) {
  const n = wordsKept(state);
  return label("kernel_lost", { words: `${n.toLocaleString("en")} ${n === 1 ? "word" : "words"}` });
}
