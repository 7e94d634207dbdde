// anywidget entry: `export default { render }`. See view.js for the wiring and state.js for the reducer.
import "./widget.css";
import { createView } from "./view.js";

function render({ model, el }) {
  const view = createView(model, el);
  return () => view.destroy();
}

export default { render };
