// A streamed Markdown answer, rendered incrementally: complete blocks are rendered once and kept,
// only the unfinished last block is re-rendered on each (animation-frame-throttled) update. When the
// text is final it is rendered once as a whole so cross-block Markdown (lists, references) is exact.
import { renderMarkdown, stablePrefixLength } from "../markdown.js";

export class AnswerView {
  constructor(el) {
    this.el = el; // .agentcell-markdown
    this.reset();
  }

  reset() {
    this.el.replaceChildren();
    this.covered = ""; // text rendered into stable chunks
    this.tail = document.createElement("div");
    this.tail.className = "agentcell-md-tail";
    this.el.append(this.tail);
    this.text = null;
    this.final = false;
    this.renders = 0; // how many markdown renders happened (tests / perf)
  }

  update(text, final) {
    text = String(text ?? "");
    if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
    if (text === this.text && final === this.final) return;
    if (final) {
      this.el.replaceChildren(renderMarkdown(text));
      this.renders++;
      this.text = text;
      this.final = true;
      this.covered = null;
      return;
    }
    if (this.final || this.covered === null || !text.startsWith(this.covered)) this.reset();
    const stable = stablePrefixLength(text.slice(this.covered.length));
    if (stable > 0) {
      const end = this.covered.length + stable;
      const chunk = document.createElement("div");
      chunk.className = "agentcell-md-chunk";
      chunk.append(renderMarkdown(text.slice(this.covered.length, end)));
      this.renders++;
      this.el.insertBefore(chunk, this.tail);
      this.covered = text.slice(0, end);
    }
    const rest = text.slice(this.covered.length);
    if (rest) {
      this.tail.replaceChildren(renderMarkdown(rest));
      this.renders++;
    } else {
      this.tail.replaceChildren();
    }
    this.text = text;
    this.final = false;
  }
}
