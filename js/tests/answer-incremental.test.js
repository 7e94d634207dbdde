// The incremental answer renderer (js/src/render/answer.js) against one render of the whole text:
// property-style over seeded random documents and random split points, plus call counts that pin the
// work to O(new text) — no durations.
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown.js";
import { AnswerView, CHUNKS_PER_GROUP, COLD_FILL_MS_PER_CHAR, learnRate } from "../src/render/answer.js";

/** Small seeded PRNG (mulberry32), so a failure names its seed and reproduces. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BLOCKS = [
  "# Heading *one*",
  "Setext heading\n===",
  "A paragraph with *emphasis*, **strong**, `code` and a [link](https://example.org/x).",
  "Uses [the ref][Ref One], [ref two], [Missing] and ![an image][ref one].",
  '[ref one]: https://example.org/one "Title"',
  "[Ref  Two]: <https://example.org/two>",
  "[REF ONE]: https://example.org/duplicate-loses",
  "- item one\n- item two\n  continued\n- item three",
  "1. first\n2. second\n\n3. loose third",
  "- [x] done\n- [ ] todo",
  "* nested\n  - inner a\n  - inner b\n* outer",
  "```python\ndef f():\n\n    return [ref one]\n```",
  "~~~\nno lang, *not emphasis*\n~~~",
  "    indented code\n    more",
  "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | **4** [ref two] |",
  "> quote line\ncontinued lazily\n> > nested [ref one]",
  "---",
  "Half-written **emphasis and `code",
  "Half *open",
  "Inline <b>html</b> and <sup>2</sup> here.",
  "<div>\n\nInside a *div*.\n\n</div>",
  "Stray <i>italic opens here",
  "<!-- a comment -->",
  "Text with trailing spaces  \nhard break",
  "Auto link https://example.org/auto and <mailto:a@b.c>.",
  "[ref two]",
  "Σίσυφος [ΣΊΣΥΦΟΣ] and [Straße]",
  "[σίσυφος]: https://example.org/sigma",
  "[STRASSE]: https://example.org/strasse",
  "> [quoted def]: https://example.org/q\n\n[Quoted Def]",
];
const SEPARATORS = ["\n\n", "\n\n", "\n\n", "\n", "\n\n\n"];

function documentFor(rand, blocks) {
  const n = 4 + Math.floor(rand() * 14);
  let text = "";
  for (let i = 0; i < n; i++) {
    text += blocks[Math.floor(rand() * blocks.length)];
    text += i === n - 1 && rand() < 0.5 ? "" : SEPARATORS[Math.floor(rand() * SEPARATORS.length)];
  }
  return text;
}

function splitPoints(rand, text) {
  const cuts = [];
  let i = 0;
  while (i < text.length) {
    i += 1 + Math.floor(rand() * (rand() < 0.3 ? 3 : 40));
    cuts.push(Math.min(i, text.length));
  }
  return cuts;
}

const BLOCK_TAG = /\s*(<\/?(?:p|h[1-6]|ul|ol|li|pre|table|thead|tbody|tr|td|th|blockquote|hr|div|br)\b[^>]*>)\s*/g;

/**
 * HTML with the whitespace that does not render taken out: runs of whitespace next to a block-level
 * tag (the sanitizer keeps or drops the newline between two blocks depending on where the fragment it
 * parses starts). Whitespace inside <pre> is left exactly as it is.
 */
function normalize(html) {
  return html
    .split(/(<pre\b[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 ? part : part.replace(/\s+/g, " ").replace(BLOCK_TAG, "$1")))
    .join("")
    .trim();
}

function fullHtml(text) {
  const div = document.createElement("div");
  div.append(renderMarkdown(text));
  return normalize(div.innerHTML);
}

/** What the view shows, chunk wrappers taken away. */
function shownHtml(el) {
  let html = "";
  for (const child of el.querySelectorAll(".agentcell-md-chunk, .agentcell-md-tail")) html += child.innerHTML;
  html = html.replace(/ class="agentcell-caret-at"/g, "").replace(/ agentcell-caret-at"/g, '"'); // the caret's marker
  return normalize(html);
}

/** Let the worker's event loop turn: a long synchronous test under a loaded machine would otherwise
 * starve vitest's worker RPC (its 60 s "Timeout calling onTaskUpdate"). */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

function stream(text, cuts, { check } = {}) {
  const el = document.createElement("div");
  const view = new AnswerView(el);
  for (const cut of cuts) {
    view.update(text.slice(0, cut), false);
    if (check) check(text.slice(0, cut), el);
  }
  view.update(text, true);
  return { el, view };
}

describe("incremental Markdown equals one render of the whole text", () => {
  it("for 120 random documents, each streamed at random split points", async () => {
    for (let seed = 1; seed <= 120; seed++) {
      await turn();
      const rand = rng(seed);
      const text = documentFor(rand, BLOCKS);
      const { el } = stream(text, splitPoints(rand, text));
      expect(shownHtml(el), `seed ${seed}: ${JSON.stringify(text)}`).toBe(fullHtml(text));
    }
  }, 120_000);

  it("at every step of the stream too, while no link definition is still open", async () => {
    const noDefs = BLOCKS.filter((b) => !/\]:/.test(b));
    for (let seed = 1000; seed < 1020; seed++) {
      await turn();
      const rand = rng(seed);
      const text = documentFor(rand, noDefs);
      const check = (prefix, el) => expect(shownHtml(el), `seed ${seed} at ${prefix.length}: ${JSON.stringify(prefix)}`).toBe(fullHtml(prefix));
      stream(text, splitPoints(rand, text), { check });
    }
  }, 120_000);

  it("one character at a time, and in one piece", () => {
    const text = BLOCKS.join("\n\n");
    const cuts = Array.from({ length: text.length }, (_, i) => i + 1);
    expect(shownHtml(stream(text, cuts).el)).toBe(fullHtml(text));
    expect(shownHtml(stream(text, []).el)).toBe(fullHtml(text));
  });

  it("a definition after its use renders only the chunks that use it again", () => {
    const filler = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} with a [link](https://example.org/${i}).\n\n`).join("");
    const text = `Intro uses [the spec].\n\n${filler}Closing words.\n\n[The  Spec]: https://example.org/spec\n`;
    const { el, view } = stream(text, splitPoints(rng(7), text));
    expect(shownHtml(el)).toBe(fullHtml(text));
    expect(el.querySelector('a[href="https://example.org/spec"]').textContent).toBe("the spec");
    expect(view.stats.rerenders).toBe(1);
    expect(view.chunks.filter((c) => c.renders > 1).map((c) => c.src)).toEqual(["Intro uses [the spec].\n\n"]);
  });

  it("raw HTML left open keeps the blocks it swallows together, as the HTML parser reads them", () => {
    const text = "before\n\n<div>\n\nin *div*\n\n</div>\n\nafter <b>bold\n\nstill bold?\n\nend\n";
    const { el } = stream(text, splitPoints(rng(3), text));
    expect(shownHtml(el)).toBe(fullHtml(text));
    expect(el.querySelector("div.agentcell-md-chunk > div").textContent).toContain("in div");
  });
});

describe("incremental Markdown: work per update (call counts, no durations)", () => {
  const sections = Array.from({ length: 120 }, (_, i) =>
    [
      `## Section ${i}`,
      `Step ${i} explains *one* thing with \`code\` and a [link](https://example.org/${i}).`,
      `- first point ${i}\n- second point\n- third **point**`,
      `\`\`\`python\ndef step_${i}(rows):\n    return sum(rows) * ${i}\n\`\`\``,
      `| k | v |\n|---|---|\n| ${i} | ${i * 2} |`,
    ].join("\n\n"),
  );
  const text = sections.join("\n\n") + "\n";

  it("a 10,000-delta stream renders each completed block once, and the final render only the open block", async () => {
    const deltas = 10_000;
    const size = Math.ceil(text.length / deltas);
    const el = document.createElement("div");
    const view = new AnswerView(el);
    let updates = 0;
    for (let i = 1; i <= deltas; i++) {
      if (i % 500 === 0) await turn();
      view.update(text.slice(0, Math.round((i * text.length) / deltas)), false);
      updates++;
    }
    const before = { ...view.stats };
    view.update(text, true);
    const blocks = 5 * sections.length;
    expect(view.chunks).toHaveLength(blocks);
    expect(el.querySelectorAll(".agentcell-md-group")).toHaveLength(Math.ceil(blocks / CHUNKS_PER_GROUP));
    expect(view.chunks.every((c) => c.renders === 1)).toBe(true);
    expect(view.stats.chunkRenders).toBe(blocks);
    expect(view.stats.chunkChars).toBe(text.length); // every character rendered into a chunk exactly once
    expect(view.stats.rerenders).toBe(0);
    // The final update renders the last block only (the table of the last section), and no tail.
    expect(view.stats.chunkRenders - before.chunkRenders).toBe(1);
    expect(view.stats.chunkChars - before.chunkChars).toBeLessThan(40);
    expect(view.stats.tailRenders).toBe(before.tailRenders);
    // The tail never grows past the open block: per update at most the longest block plus one delta
    // plus the blank lines after it, not the answer so far.
    const longest = Math.max(...view.chunks.map((c) => c.src.length));
    expect(view.stats.tailRenders).toBeLessThanOrEqual(updates);
    expect(view.stats.tailChars).toBeLessThanOrEqual(updates * (2 * longest + size));
    expect(shownHtml(el)).toBe(fullHtml(text));
  }, 120_000);

  it("an update that changes nothing renders nothing", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update(text, false);
    const renders = view.renders;
    view.update(text, false);
    expect(view.renders).toBe(renders);
  });
});

describe("a view that opens on a long answer renders it a slice per task", () => {
  const text = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} uses [ref ${i % 7}] and *emphasis*.\n\n`).join("") +
    Array.from({ length: 7 }, (_, i) => `[ref ${i}]: https://example.org/${i}\n`).join("");

  it("no task renders more than a slice (plus one block), and the end result equals one full render", () => {
    const el = document.createElement("div");
    const queue = [];
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn) });
    const chars = () => view.stats.chunkChars + view.stats.tailChars + view.stats.rerenderChars;
    let before = chars();
    view.update(text, true);
    const perTask = [chars() - before];
    expect(el.querySelector(".agentcell-md-tail").hasAttribute("data-pending")).toBe(true);
    while (queue.length) {
      before = chars();
      queue.shift()();
      perTask.push(chars() - before);
    }
    expect(perTask.length).toBeGreaterThan(text.length / 2000 - 1);
    // a slice of new blocks, then (once the definitions at the end arrive) a slice of chunks to render again
    expect(Math.max(...perTask)).toBeLessThanOrEqual(2 * 2000);
    expect(view.stats.rerenders).toBe(400);
    expect(el.querySelector(".agentcell-md-tail").hasAttribute("data-pending")).toBe(false);
    // the definitions at the very end re-render the chunks that use them, once they are reached
    expect(shownHtml(el)).toBe(fullHtml(text));
  });

  it("the update that finds the view far behind (an animation frame) renders nothing itself", () => {
    const el = document.createElement("div");
    const queue = [];
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn) });
    view.update(text.slice(0, 500), false);
    const renders = view.renders;
    view.update(text.slice(0, 9000), false);
    view.update(text.slice(0, 9500), false); // still behind: no second deferred task
    expect(view.renders).toBe(renders);
    expect(queue.length).toBe(1);
    expect(el.querySelector(".agentcell-md-tail").hasAttribute("data-pending")).toBe(true);
    while (queue.length) queue.shift()();
    expect(view.renders).toBeGreaterThan(renders);
    expect(el.querySelector(".agentcell-md-tail").hasAttribute("data-pending")).toBe(false);
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 9500)));
    view.update(text.slice(0, 9600), false); // caught up: a small update renders at once
    expect(queue.length).toBe(0);
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 9600)));
  });

  it("a deferred slice also stops at the first block past its time budget, and still ends as one full render", () => {
    const el = document.createElement("div");
    const queue = [];
    let now = 0;
    const clock = () => (now += 1); // every reading of the clock: one more millisecond
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn), budgetMs: 3, clock });
    view.update(text, true);
    const perTask = [];
    while (queue.length) {
      const before = view.stats.chunkRenders + view.stats.rerenders;
      queue.shift()();
      perTask.push(view.stats.chunkRenders + view.stats.rerenders - before);
    }
    // 3 ms on a clock read once per block: 4 new chunks (the 4th reading passes the deadline), plus at most one
    // stale chunk rendered again, per task; not a 2,000-character slice's ~50
    expect(Math.max(...perTask)).toBeLessThanOrEqual(5);
    expect(perTask.length).toBeGreaterThan(2 * text.length / 2000);
    expect(perTask.every((n) => n > 0)).toBe(true);
    expect(shownHtml(el)).toBe(fullHtml(text));
  });

  it("a time budget of 0 ms still makes one block of progress per task", () => {
    const el = document.createElement("div");
    const queue = [];
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn), budgetMs: 0 });
    view.update(text.slice(0, 6000), false);
    let tasks = 0;
    while (queue.length && tasks < 10_000) {
      queue.shift()();
      tasks++;
    }
    expect(queue.length).toBe(0);
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 6000)));
  });

  it("a deferred slice also counts the sanitizer pass it will need: before any is measured, the cold rate", () => {
    const el = document.createElement("div");
    const queue = [];
    const clock = () => 0; // Markdown work takes no time by this clock: only the estimate can stop a slice
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn), budgetMs: 10, clock });
    view.update(text, true);
    const first = view.committed.length;
    queue.shift()();
    const slice = view.committed.length - first;
    // 10 ms at the cold rate is 1,000 characters of pending HTML: the slice stops at the first block past them
    expect(slice).toBeGreaterThan(10 / COLD_FILL_MS_PER_CHAR);
    expect(slice).toBeLessThan(10 / COLD_FILL_MS_PER_CHAR + 400);
    expect(view.fillRate).toBeLessThan(COLD_FILL_MS_PER_CHAR); // measured (0 by this clock), eased in
    while (queue.length) queue.shift()();
    expect(shownHtml(el)).toBe(fullHtml(text));
  });

  it("an update whose steps have been slow (or not yet measured) is deferred out of the animation frame; a fast one is not", () => {
    const el = document.createElement("div");
    const queue = [];
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn), budgetMs: 10, clock: () => 0 });
    const small = text.slice(0, 600);
    expect(view.stepRate).toBe(COLD_FILL_MS_PER_CHAR); // nothing measured yet: the cold rate
    view.update(small, false);
    expect(queue.length).toBe(1); // 600 characters at the cold rate: 6 ms, more than half the budget
    expect(shownHtml(el)).toBe(fullHtml(""));
    queue.shift()();
    expect(shownHtml(el)).toBe(fullHtml(small));
    expect(view.stepRate).toBeLessThan(COLD_FILL_MS_PER_CHAR); // measured (0 by this clock), eased in
    view.update(text.slice(0, 700), false);
    expect(queue.length).toBe(0); // 100 more characters at the lower rate: rendered in the frame
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 700)));
    view.stepRate = 0.02; // 500 more characters would take 10 ms: more than half the budget
    view.update(text.slice(0, 1200), false);
    expect(queue.length).toBe(1);
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 700))); // nothing rendered in the frame
    queue.shift()();
    expect(shownHtml(el)).toBe(fullHtml(text.slice(0, 1200)));
    expect(view.stepRate).toBeLessThan(0.02); // measured at 0 by this clock: eased down
  });

  it("learnRate takes a higher rate at once and eases a lower one in", () => {
    expect(learnRate(0.001, 0.004)).toBe(0.004);
    expect(learnRate(0.004, 0)).toBeCloseTo(0.003);
    expect(learnRate(0.004, Number.NaN)).toBe(0.004);
    expect(learnRate(0.004, -1)).toBe(0.004);
  });

  it("a deferred slice of a replaced text does nothing", () => {
    const el = document.createElement("div");
    const queue = [];
    const view = new AnswerView(el, { slice: 2000, defer: (fn) => queue.push(fn) });
    view.update(text, false);
    view.update("something else", false);
    const renders = view.renders;
    while (queue.length) queue.shift()();
    expect(view.renders).toBe(renders);
    expect(shownHtml(el)).toBe(fullHtml("something else"));
  });
});

describe("one sanitizer pass per step", () => {
  it("parses the HTML of a step's new chunks and its tail in one document, not one per block", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update("Start.\n\n", false);
    const parse = DOMParser.prototype.parseFromString;
    let calls = 0;
    DOMParser.prototype.parseFromString = function (...args) {
      calls++;
      return parse.apply(this, args);
    };
    try {
      // Eight complete blocks and an open tail arrive in one update (one animation frame).
      const blocks = Array.from({ length: 8 }, (_, i) => `Para ${i} with *emphasis* and \`code\`.\n\n`).join("");
      view.update(`Start.\n\n${blocks}Tail *open`, false);
    } finally {
      DOMParser.prototype.parseFromString = parse;
    }
    // "Start." and seven paragraphs are committed; the eighth (it may still grow) and the open line are the tail.
    expect(view.stats.chunkRenders).toBe(8);
    expect(view.stats.tailRenders).toBe(2);
    expect(calls).toBe(1);
    expect(el.querySelectorAll(".agentcell-md-chunk p em").length).toBe(7);
    expect(el.querySelectorAll(".agentcell-md-tail p em").length).toBe(1); // "*open" is not emphasis yet
  });

  it("keeps each block's HTML to its own chunk: a stray end tag or an open element does not leak", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update("Before </div> stray.\n\n</p> also stray\n\nAfter <i>x</i>.\n\nMore.\n\nTail", false);
    const chunks = [...el.querySelectorAll(".agentcell-md-chunk")];
    expect(chunks.length).toBe(3);
    expect(chunks[0].textContent).toContain("Before");
    expect(chunks[0].textContent).toContain("stray.");
    expect(chunks[2].querySelector("i").textContent).toBe("x");
    expect(el.querySelector(".agentcell-md-tail").textContent.trim()).toBe("More.\nTail");
    const whole = document.createElement("div");
    whole.append(renderMarkdown("Before </div> stray.\n\n</p> also stray\n\nAfter <i>x</i>.\n\nMore.\n\nTail"));
    expect(el.textContent).toBe(whole.textContent);
  });
});

describe("the caret's place", () => {
  it("is a class on the tail's last element, moved with the tail", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update("First.\n\n- a\n- b", false);
    const marked = el.querySelectorAll(".agentcell-caret-at");
    expect(marked.length).toBe(1);
    expect(marked[0]).toBe(el.querySelector(".agentcell-md-tail").lastElementChild);
    view.update("First.\n\n- a\n- b\n\nNext *para*", false);
    expect(el.querySelectorAll(".agentcell-caret-at").length).toBe(1);
    expect(el.querySelector(".agentcell-caret-at").textContent).toBe("Next para");
  });
});

describe("a streaming answer taken by appends", () => {
  const para = (i) => `Paragraph ${i} with *emphasis*, \`code\` and a [link](https://example.org/${i}).\n\n`;
  const text = Array.from({ length: 1500 }, (_, i) => para(i)).join(""); // ~110,000 characters

  it("never reads the whole answer, and ends as one render of it", () => {
    const el = document.createElement("div");
    const view = new AnswerView(el);
    view.update(text.slice(0, 40), false);
    const deltas = [];
    for (let at = 40; at < text.length; at += 300) deltas.push(text.slice(at, at + 300));
    // Every string method call on a string longer than this would be a read of the whole answer (it
    // copies a rope built by `+=`, every frame); the open tail and the blocks are far shorter.
    const limit = 2000;
    const names = ["startsWith", "includes", "slice", "indexOf", "lastIndexOf", "replace", "endsWith"];
    const saved = names.map((n) => String.prototype[n]);
    let longest = 0;
    names.forEach((n, i) => {
      String.prototype[n] = function (...args) {
        if (this.length > longest) longest = this.length;
        return saved[i].apply(this, args);
      };
    });
    let handled = true;
    try {
      for (const delta of deltas) handled = view.append(delta) && handled;
    } finally {
      names.forEach((n, i) => (String.prototype[n] = saved[i]));
    }
    expect(handled).toBe(true);
    expect(longest).toBeLessThan(limit);
    expect(shownHtml(el)).toBe(fullHtml(text));
    view.update(text, true); // the end: the whole text, once
    expect(shownHtml(el)).toBe(fullHtml(text));
  }, 60_000);

  it("hands a carriage return, a final text or no text yet back to update", () => {
    const view = new AnswerView(document.createElement("div"));
    expect(view.append("a")).toBe(false); // nothing to append to
    view.update("Line one\r", false);
    expect(view.append("\nLine two")).toBe(false); // "\r" + "\n" is one line break: the whole text decides
    view.update("Line one\r\nLine two", false);
    expect(view.append(" more")).toBe(true);
    expect(view.append("x\ry")).toBe(false);
    view.update("Done.", true);
    expect(view.append(" late")).toBe(false);
  });
});
