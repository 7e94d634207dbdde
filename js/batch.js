// anywidget entry of the batch widget (`BatchWidget`): `export default { render }`. See batch/view.js.
import "./widget.css";
import "./batch/batch.css";
import { createBatchView } from "./batch/view.js";

function render({ model, el }) {
  const view = createBatchView(model, el);
  return () => view.destroy();
}

export default { render };
