// anywidget entry: `export default { render }`. See view.js for the wiring and state.js for the reducer.
//
// The heavy parts of the bundle are evaluated lazily, each in a task of its own, when the first view
// renders: marked and DOMPurify (markdown.js), a warm-up of the Markdown path, then the view. Evaluated with the module they were one
// task of ~45 ms (marked builds its grammar's regular expressions when it is evaluated), and the first
// render ran in the same task (benchmark history §4). esbuild bundles the `import()`s into this one file as
// lazily initialised modules: nothing is fetched.
import "./widget.css";
import { markOutput } from "./view/host.js";

export const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Run `steps` in order, each in a new task (after `yieldTask()`); resolves to the last step's value. */
export async function inTasks(steps, yieldTask = nextTask) {
  let value;
  for (const step of steps) {
    await yieldTask();
    value = await step();
  }
  return value;
}

let loading = null;

/**
 * The modules evaluated first, one task each: marked (it builds its grammar's regular expressions when
 * evaluated), DOMPurify, then markdown.js (which imports both). As one task they took 33 ms in a traced
 * run and 65 ms in an untraced one on a loaded machine, two thirds of it marked's (benchmark history §4).
 */
export const MODULE_STEPS = Object.freeze([() => import("marked"), () => import("dompurify"), () => import("./markdown.js")]);

/**
 * The view module, loaded once: the modules of `MODULE_STEPS`, then the warm-up steps (a small sample
 * through marked and DOMPurify, so the first render of a streaming answer does not pay a cold start),
 * then view.js, each in a task of its own.
 */
export function loadView() {
  loading ??= inTasks(MODULE_STEPS).then((md) => inTasks([...md.warmUpSteps, () => import("./view.js")]));
  return loading;
}

async function render({ model, el }) {
  const { createView } = await loadView();
  const view = createView(model, el);
  const unmark = markOutput(el); // the saved twin next to a live view is hidden (view/host.js)
  return () => {
    unmark();
    view.destroy();
  };
}

export default { render };
