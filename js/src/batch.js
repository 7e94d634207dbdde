// anywidget entry of the batch widget (`BatchWidget`, and `ModelsWidget`): `export default { render }`. See batch/view.js.
import "./widget.css";
import "./batch/batch.css";
import { createModelsView } from "./batch/models.js";
import { createBatchView } from "./batch/view.js";
import { markOutput } from "./view/host.js";

function render({ model, el }) {
  // `ModelsWidget` (the models' scores side by side) shares this bundle: its `view` trait says so.
  const view = model.get("view") === "models" ? createModelsView(model, el) : createBatchView(model, el);
  const unmark = markOutput(el); // the saved twin next to a live view is hidden (view/host.js)
  return () => {
    unmark();
    view.destroy();
  };
}

export default { render };
