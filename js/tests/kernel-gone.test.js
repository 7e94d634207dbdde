// The kernel went away mid-run (JupyterLab marks the model not live: `comm_live_update`): the view says the run
// was lost and how many words it kept, stops its clock, disables Stop, and says it once.
import { afterEach, describe, expect, it } from "vitest";
import { createView } from "../src/view.js";
import { FakeModel } from "./helpers/fake-model.js";
import { ev, fullRun } from "./helpers/fixtures.js";

let views = [];
let clock = 0;
function mount() {
  const model = new FakeModel();
  const el = document.createElement("div");
  document.body.append(el);
  const view = createView(model, el, { now: () => clock, requestAnimationFrame: null });
  views.push({ view, el });
  return { model, view, $: (s) => el.querySelector(s) };
}
afterEach(() => {
  for (const { view, el } of views) {
    view.destroy();
    el.remove();
  }
  views = [];
  clock = 0;
});

describe("kernel gone", () => {
  it("a running run is shown lost, with its words kept, Stop disabled and the clock stopped", () => {
    const { model, view, $ } = mount();
    model.emit({ kind: "events", events: [ev.runStarted(), ev.slotStarted(), ev.token("Three words here "), ev.token("and two")], t: 1 });
    view.flush();
    expect($(".agentcell").dataset.status).toBe("running");
    clock = 2000;
    view.flush();
    const before = $(".agentcell-elapsed").textContent;
    expect(before).toBe("3.0 s");

    model.fire("comm_live_update");
    view.flush();
    expect($(".agentcell").dataset.status).toBe("lost");
    expect($(".agentcell-status").textContent).toBe("kernel restarted — this run was lost; 5 words kept");
    expect($(".agentcell-stop").disabled).toBe(true);
    const slot = $(".agentcell-slot");
    expect(slot.dataset.slotStatus).toBe("interrupted"); // the slot no longer says it is running
    expect($(".agentcell-slot-status").textContent).toBe("interrupted");
    clock = 60_000;
    view.flush();
    expect($(".agentcell-elapsed").textContent).toBe(before);
    model.fire("comm_live_update"); // said once: a second notice changes nothing
    view.flush();
    expect($(".agentcell-status").textContent).toBe("kernel restarted — this run was lost; 5 words kept");
  });

  it("a run that had ended keeps its ending", () => {
    const { model, view, $ } = mount();
    model.emit({ kind: "events", events: fullRun() });
    view.flush();
    const status = $(".agentcell").dataset.status;
    model.fire("comm_live_update");
    view.flush();
    expect($(".agentcell").dataset.status).toBe(status);
    expect(status).not.toBe("lost");
  });

  it("stops listening when the view is destroyed", () => {
    const { model, view } = mount();
    view.destroy();
    views = [];
    expect(model.listenerCount()).toBe(0);
  });
});
