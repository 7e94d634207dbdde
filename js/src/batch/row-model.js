// A row's run seen through the single-run view (js/src/view.js): an anywidget-like model whose traits are
// the row's status and whose messages travel inside the batch widget's own, tagged with the row index.
//   view → kernel: model.send(msg)  ⇒  batch.send({kind: "row", index, msg})
//   kernel → view: the batch view calls deliver(msg) / setStatus(status).

export function createRowModel(sendToBatch, index, status = "running") {
  const traits = { status, final: [], hint: "" };
  const handlers = new Map();
  const fire = (name, ...args) => {
    for (const fn of [...(handlers.get(name) ?? [])]) fn(...args);
  };
  return {
    index,
    get: (name) => traits[name],
    set(name, value) {
      traits[name] = value;
      fire(`change:${name}`, value);
    },
    save_changes() {},
    send: (msg) => sendToBatch({ kind: "row", index, msg }),
    on(name, fn) {
      if (!handlers.has(name)) handlers.set(name, new Set());
      handlers.get(name).add(fn);
    },
    off(name, fn) {
      if (!name) handlers.clear();
      else if (!fn) handlers.delete(name);
      else handlers.get(name)?.delete(fn);
    },
    /** A message from the kernel for this row ({kind: "snapshot" | "events", events}). */
    deliver: (msg) => fire("msg:custom", msg, []),
    setStatus(value) {
      if (value && traits.status !== value) this.set("status", value);
    },
  };
}
