// A streamed Markdown answer, rendered incrementally to the end: complete top-level blocks are
// rendered once into chunks and kept; only the open tail is re-rendered per (animation-frame-throttled)
// update. When the answer is final its tail is split into blocks the same way, so the final render
// touches only the tail. The two things a block's rendering can depend on beyond itself:
// - reference links: a chunk is rendered knowing every link definition committed so far; when a new
//   definition arrives, only the chunks that could use its label (by `refKey`) are rendered again;
// - raw HTML left open (`<div>` … `</div>` across blocks): such blocks are kept together in one chunk
//   (or in the tail) until the element is closed, so the HTML parser sees them as one piece.
// The result equals one render of the whole text (js/tests/answer-incremental.test.js checks split points).
import { completeBlocks, htmlDepth, lexMarkdown, plainFragment, refKey, sanitizeEach, tokensToHtml } from "../markdown.js";

/**
 * Characters of complete blocks rendered per task when a view is far behind: a view that opens on a long
 * answer, or the first render of a stream whose text piled up while the view loaded. In Chromium, warm,
 * 3,000 characters of the §4 benchmark's Markdown took 7–35 ms and 6,000 took 20–45 ms (benchmark history §4).
 */
export const ANSWER_SLICE = 3000;

/**
 * Milliseconds a deferred slice may take: it stops at the first block past them, counting its Markdown work
 * so far and the sanitizer pass its renders will need (estimated at the rate measured on the passes before).
 * Characters alone did not bound a slice's time: the first slices run before the browser has optimized the
 * lexer (two took 49 and 55 ms on a quiet machine, session 11), and the sanitizer pass after the Markdown
 * work, uncounted until session 12, took 3-15 ms warm and 34 ms cold (benchmark history §4).
 */
export const ANSWER_SLICE_MS = 10;

/**
 * What sanitizing and placing the HTML of one character of Markdown is taken to cost (ms) before the view
 * has measured it. The first passes run cold: in Chromium the first deferred slice's sanitizer pass took
 * 34 ms for 1,605 characters, against ~1.2 ms per 1,000 warm (benchmark history §4, session 12). Each pass
 * then measures the rate (`learnRate`).
 */
export const COLD_FILL_MS_PER_CHAR = 0.01;

/**
 * A rate (ms per character) after a new measurement: a higher one is taken at once, a lower one eased
 * in, so one fast pass after a slow one does not make the next slice large again.
 */
export function learnRate(rate, measured) {
  if (!(measured >= 0) || !Number.isFinite(measured)) return rate;
  return measured >= rate ? measured : 0.75 * rate + 0.25 * measured;
}

/** The class of the tail's last element: the streaming caret is drawn after it. */
export const CARET_CLASS = "agentcell-caret-at";

/**
 * Chunks per group. Groups, not chunks, carry `content-visibility: auto` (widget.css): Chromium checks
 * every such element against the viewport on each frame, and at one per chunk (2,500 in a 50,000-token
 * answer) that check alone grew past 20 ms a frame.
 */
export const CHUNKS_PER_GROUP = 64;

function chunkElement() {
  const el = document.createElement("div");
  el.className = "agentcell-md-chunk";
  return el;
}

export class AnswerView {
  /**
   * `slice` and `defer`: a view that opens on a long answer (a snapshot, a saved notebook, a view
   * opened late) has no chunks yet. With `defer` (e.g. a zero timeout), it renders at most `slice`
   * characters of complete blocks per task and defers the rest, so no single task renders the whole
   * answer; without it, everything is rendered at once. `budgetMs` (with `defer`): a deferred slice also
   * stops, after at least one block, once its Markdown work so far plus the sanitizer pass it will need
   * (estimated from the passes before) would take longer than that by `clock`; and an update that would
   * take longer than half of it (by the rate of the steps before) is deferred rather than done in the
   * animation frame, whose style and layout follow in the same task.
   */
  constructor(el, { slice = Infinity, defer = null, budgetMs = Infinity, clock = () => performance.now() } = {}) {
    this.el = el; // .agentcell-markdown
    this.slice = slice;
    this.defer = defer;
    this.budgetMs = budgetMs; // a deferred slice also stops at the first block past this many ms
    this.clock = clock;
    // Measured costs (ms per character) of this browser, kept across texts: the sanitizer pass (`fill`),
    // and a whole step (Markdown, sanitizer and DOM). Only read with a finite `budgetMs`. Both start at the
    // cold rate: a view's first render of a long text leaves the animation frame, and its first slice is small.
    this.fillRate = COLD_FILL_MS_PER_CHAR;
    this.stepRate = COLD_FILL_MS_PER_CHAR;
    this.generation = 0;
    this.reset();
  }

  reset() {
    this.generation++; // a deferred catch-up of an earlier text does nothing
    this.behind = false;
    this.scheduled = false; // a deferred step is pending
    this.el.replaceChildren();
    this.committed = ""; // the text rendered into chunks (a prefix of the text)
    this.open = ""; // the rest of the text, after `committed`
    this.cr = false; // the text as given ended with "\r" (a "\n" appended next belongs to it)
    this.chunks = []; // {el, src, key (refKey of src, when it has a "["), known (labels known when rendered), renders}
    this.links = Object.create(null); // link definitions in the committed text (first one wins)
    this.labels = []; // their keys, in the order they were committed
    this.stale = []; // chunks to render again (a link definition they may use arrived)
    this.group = null; // the group new chunks go into
    this.tail = document.createElement("div");
    this.tail.className = "agentcell-md-tail";
    this.el.append(this.tail);
    this.text = null;
    this.final = false;
    this.pending = []; // {el, html, src}: rendered to HTML, filled in by `fill()` (one sanitizer pass per step)
    this.pendingChars = 0; // the Markdown characters behind `pending`
    // Work done, for tests and benchmarks: markdown renders and the characters they covered.
    this.stats = { chunkRenders: 0, chunkChars: 0, tailRenders: 0, tailChars: 0, rerenders: 0, rerenderChars: 0 };
  }

  /** markdown renders so far (chunks, re-rendered chunks and tails) */
  get renders() {
    return this.stats.chunkRenders + this.stats.tailRenders + this.stats.rerenders;
  }

  update(given, final) {
    const raw = String(given ?? "");
    const cr = raw.includes("\r");
    const text = cr ? raw.replace(/\r\n?/g, "\n") : raw;
    final = Boolean(final);
    if (text === this.text && final === this.final) return;
    // A final answer's last blocks were committed as complete; text that changes after that, or that
    // no longer starts with what was committed (a retraction), starts over.
    if (this.final || !text.startsWith(this.committed)) this.reset();
    this.text = text;
    this.open = text.slice(this.committed.length);
    this.cr = cr && raw.endsWith("\r");
    this.final = final;
    this.advance();
  }

  /**
   * The text grew by `delta` at its end (the caller knows: the same answer, still streaming). Nothing
   * here reads the whole text, which `update` does: built by `+=`, it is a rope that each such read
   * copies whole, every frame. Returns false, doing nothing, when `update` must take the whole text
   * instead: no text yet, a final one, or a carriage return to normalize.
   */
  append(delta) {
    delta = String(delta ?? "");
    if (delta === "") return this.text !== null && !this.final;
    if (this.text === null || this.final || this.cr || delta.includes("\r")) return false;
    this.text += delta;
    this.open += delta;
    this.advance();
    return true;
  }

  /**
   * Far behind (a view that opens on a long answer, or the text that piled up while the view loaded):
   * every slice is rendered in a task of its own, the first one too. This runs in an animation frame,
   * whose style and layout follow in the same task: a slice there made that task long.
   */
  advance() {
    const costly = this.open.length > this.slice || this.open.length * this.stepRate > this.budgetMs / 2;
    if (this.defer !== null && costly) this.later();
    else this.step();
  }

  /** Render the next slice in a deferred task (once; the task reads the text as it is then). */
  later() {
    this.behind = true;
    this.tail.toggleAttribute("data-pending", true); // the rest is not shown yet
    if (this.scheduled) return;
    this.scheduled = true;
    const generation = this.generation;
    this.defer(() => {
      if (this.generation !== generation) return; // a deferred slice of an earlier text does nothing
      this.scheduled = false;
      if (this.behind) this.step(true);
    });
  }

  /**
   * Render what changed since the last step (or, when far behind, the next slice of it). A deferred step
   * (`deferred`) or a slice also stops its blocks at `budgetMs`; what is left waits for the next task.
   */
  step(deferred = false) {
    const began = this.budgetMs === Infinity ? 0 : this.clock();
    const known = this.labels.length;
    const start = this.committed.length;
    const rest = this.open;
    const far = rest.length > this.slice && this.defer !== null;
    const deadline = (far || deferred) && this.defer !== null ? this.clock() + this.budgetMs : Infinity;
    let behind = far && this.commitSlice(rest, deadline);
    if (!behind) behind = this.commit(completeBlocks(rest, this.final), deadline);
    const open = (this.open = rest.slice(this.committed.length - start));
    const tokens = open && !behind ? lexMarkdown(open, this.links) : null;
    // A final tail (raw HTML never closed) is final too: its link definitions count for every chunk.
    if (this.final && tokens) this.learn(tokens.links, Object.keys(tokens.links));
    if (this.labels.length > known) this.markReferences(known);
    this.renderStale(deadline);
    this.renderTail(behind ? "" : open, tokens);
    const work = this.pendingChars;
    this.fill();
    if (this.budgetMs !== Infinity && work > 0) this.stepRate = learnRate(this.stepRate, (this.clock() - began) / work);
    // Where the streaming caret goes (widget.css). A class, not `.agentcell-md-tail > :last-child`: a rule
    // whose last part names no class makes the browser restyle the whole answer when the run's or the
    // slot's status attribute changes (the end of a long run), where a class is looked up.
    this.tail.lastElementChild?.classList.add(CARET_CLASS);
    this.tail.toggleAttribute("data-pending", behind); // the rest is not shown yet
    this.behind = behind || this.stale.length > 0;
    if (this.behind) this.later();
  }

  /** Commit the complete blocks within the next `slice` characters; false if that made no progress. */
  commitSlice(rest, deadline) {
    const before = this.committed.length;
    this.commit(completeBlocks(rest.slice(0, this.slice), false), deadline);
    return this.committed.length > before;
  }

  /**
   * Render complete blocks into chunks; blocks that leave raw HTML open wait for the one closing it.
   * Past `deadline` (by `clock`) it stops after the chunk it made: the rest stays uncommitted, and it
   * returns true (blocks are left); false when it committed them all.
   */
  commit(blocks, deadline = Infinity) {
    const links = Object.assign(Object.create(null), this.links);
    const depth = new Map();
    let src = "";
    let html = "";
    let fresh = [];
    let known = 0; // labels the group's first block was lexed with
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i];
      const tokens = lexMarkdown(block, links);
      for (const label of Object.keys(tokens.links)) {
        if (!(label in links)) {
          links[label] = tokens.links[label];
          fresh.push(label);
        }
      }
      if (!src) known = this.labels.length + fresh.length;
      src += block;
      html += tokensToHtml(tokens);
      if (htmlDepth(tokens, depth).size > 0) continue;
      this.addChunk(src, html, known);
      this.learn(links, fresh);
      src = html = "";
      fresh = [];
      if (deadline !== Infinity && i + 1 < blocks.length && this.past(deadline)) return true;
    }
    return false;
  }

  /** Would this step, with the sanitizer pass its renders so far need, end past `deadline`? */
  past(deadline) {
    return this.clock() + this.pendingChars * this.fillRate > deadline;
  }

  /** Keep the definitions of `labels` (from `links`) that are new: the first definition wins. */
  learn(links, labels) {
    for (const label of labels) {
      if (label in this.links) continue;
      this.links[label] = links[label];
      this.labels.push(label);
    }
  }

  addChunk(src, html, known) {
    const el = chunkElement();
    this.pending.push({ el, html, src });
    this.pendingChars += src.length;
    if (this.group === null || this.group.childElementCount >= CHUNKS_PER_GROUP) {
      this.group = document.createElement("div");
      this.group.className = "agentcell-md-group";
      this.el.insertBefore(this.group, this.tail);
    }
    this.group.append(el);
    this.chunks.push({ el, src, key: src.includes("[") ? refKey(src) : null, known, renders: 1, stale: false });
    this.committed += src;
    this.stats.chunkRenders++;
    this.stats.chunkChars += src.length;
  }

  /** New link definitions from label index `from` on: the chunks that could refer to them are stale. */
  markReferences(from) {
    const keys = this.labels.map(refKey);
    for (const chunk of this.chunks) {
      if (chunk.key === null || chunk.known >= keys.length) continue;
      const start = Math.max(chunk.known, from);
      if (!chunk.stale && keys.slice(start).some((k) => chunk.key.includes(k))) {
        chunk.stale = true;
        this.stale.push(chunk);
      }
      chunk.known = keys.length;
    }
  }

  /**
   * Render stale chunks again: when deferring, at most a slice of them per task, stopping past `deadline`
   * (the step's, else `budgetMs` from now).
   */
  renderStale(deadline = Infinity) {
    let budget = this.defer === null ? Infinity : this.slice;
    if (deadline === Infinity && this.defer !== null && this.stale.length > 0) deadline = this.clock() + this.budgetMs;
    while (this.stale.length > 0 && budget > 0) {
      const chunk = this.stale.shift();
      this.pending.push({ el: chunk.el, html: tokensToHtml(lexMarkdown(chunk.src, this.links)), src: chunk.src });
      this.pendingChars += chunk.src.length;
      chunk.stale = false;
      chunk.renders++;
      budget -= chunk.src.length;
      this.stats.rerenders++;
      this.stats.rerenderChars += chunk.src.length;
      if (deadline !== Infinity && this.past(deadline)) break;
    }
  }

  renderTail(rest, tokens) {
    if (!rest) {
      this.tail.replaceChildren();
      return;
    }
    this.pending.push({ el: this.tail, html: tokensToHtml(tokens), src: rest });
    this.pendingChars += rest.length;
    this.stats.tailRenders++;
    this.stats.tailChars += rest.length;
  }

  /** Put the sanitized HTML of this step's renders (new chunks, stale chunks, the tail) in place, in one pass. */
  fill() {
    const jobs = this.pending;
    const chars = this.pendingChars;
    if (jobs.length === 0) return;
    this.pending = [];
    this.pendingChars = 0;
    const began = this.budgetMs === Infinity ? 0 : this.clock();
    const frags = sanitizeEach(jobs.map((job) => job.html));
    jobs.forEach((job, i) => job.el.replaceChildren(frags ? frags[i] : plainFragment(job.src)));
    if (this.budgetMs !== Infinity && chars > 0) this.fillRate = learnRate(this.fillRate, (this.clock() - began) / chars);
  }
}
