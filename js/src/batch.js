// anywidget entry of the batch widget (`BatchWidget`): `export default { render }`. See batch/view.js.
import "./widget.css";
import "./batch/batch.css";
import { createBatchView } from "./batch/view.js";
import { markOutput } from "./view/host.js";

function render({ model, el }) {
  const view = createBatchView(model, el);
  const unmark = markOutput(el); // the saved twin next to a live view is hidden (view/host.js)
  return () => {
    unmark();
    view.destroy();
  };
}

export default { render };
