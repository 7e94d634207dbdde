// A fake anywidget model: get/set/save_changes/send/on/off, plus emit() for Python -> JS messages.
export class FakeModel {
  constructor(traits = {}) {
    this.traits = { status: "idle", final: [], hint: "", ...traits };
    this.handlers = new Map();
    this.sent = [];
  }
  get(name) {
    return this.traits[name];
  }
  set(name, value) {
    this.traits[name] = value;
    this.fire(`change:${name}`, value);
  }
  save_changes() {}
  send(msg) {
    this.sent.push(msg);
  }
  on(name, fn) {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name).add(fn);
  }
  off(name, fn) {
    if (!name) return this.handlers.clear();
    if (!fn) return this.handlers.delete(name);
    this.handlers.get(name)?.delete(fn);
  }
  fire(name, ...args) {
    for (const fn of [...(this.handlers.get(name) ?? [])]) fn(...args);
  }
  /** Python -> JS custom message. */
  emit(msg) {
    this.fire("msg:custom", msg, []);
  }
  listenerCount() {
    let n = 0;
    for (const s of this.handlers.values()) n += s.size;
    return n;
  }
}
