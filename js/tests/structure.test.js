// The front end's shape, enforced: small modules with one job, short functions, and layers that only
// import downwards (state knows nothing of the DOM; render knows nothing of the model; …).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAst } from "rollup/parseAst";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "../src");
const MAX_MODULE_LINES = 400;
const MAX_FUNCTION_LINES = 60;

/** Layer (path prefix under js/src/) → the local modules it may import (prefixes). npm packages are not checked. */
const LAYERS = [
  ["state/", ["state/", "../../src/agentcell/slot_kinds.json", "../../src/agentcell/transcript/literals.json"]],
  ["state.js", ["state/"]],
  ["format.js", ["../../src/agentcell/labels.json"]],
  ["markdown.js", []],
  ["render/", ["render/", "format.js", "markdown.js"]],
  ["transcript.js", ["state.js"]],
  ["teach/", ["teach/", "state.js", "format.js", "render/", "../../src/agentcell/teaching.json"]],
  ["view/", ["view/", "state.js", "format.js", "render/", "transcript.js", "teach/"]],
  ["view.js", ["view/", "state.js", "render/dom.js", "transcript.js"]],
  ["widget.js", ["view.js", "view/host.js", "markdown.js", "widget.css"]],
  ["batch/", ["batch/", "view.js", "format.js", "render/dom.js"]],
  ["batch.js", ["batch/", "view/host.js", "widget.css"]],
  ["loader.js", []],
  ["loader-entry.js", ["loader.js"]],
];

function sources(dir = SRC) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(p));
    else if (entry.name.endsWith(".js")) out.push(p);
  }
  return out.sort();
}

function lineOf(starts, offset) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** {file, lines, functions: [{name, lines}], imports: [local import paths, relative to js/src/]} */
function analyse(file) {
  const code = readFileSync(file, "utf8");
  const starts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === "\n") starts.push(i + 1);
  const ast = parseAst(code);
  const functions = [];
  const walk = (node, name) => {
    if (!node || typeof node.type !== "string") return;
    if (/Function/.test(node.type)) {
      functions.push({ name: node.id?.name ?? name ?? "(anonymous)", lines: lineOf(starts, node.end) - lineOf(starts, node.start) + 1 });
    }
    for (const [k, v] of Object.entries(node)) {
      const childName = node.type === "Property" || node.type === "MethodDefinition" ? node.key?.name : node.type === "VariableDeclarator" ? node.id?.name : undefined;
      if (Array.isArray(v)) v.forEach((c) => walk(c, childName ?? name));
      else if (v && typeof v === "object" && k !== "loc") walk(v, childName ?? name);
    }
  };
  walk(ast);
  const imports = ast.body
    .filter((n) => (n.type === "ImportDeclaration" || n.type.startsWith("Export")) && n.source)
    .map((n) => n.source.value)
    .filter((s) => s.startsWith(".")) // npm packages are not layered here
    .map((s) => relative(SRC, resolve(dirname(file), s)).replaceAll("\\", "/"));
  return { file: relative(SRC, file).replaceAll("\\", "/"), lines: starts.length - (code.endsWith("\n") ? 1 : 0), functions, imports };
}

const modules = sources().map(analyse);

describe("front-end structure", () => {
  it("finds the modules", () => {
    expect(modules.map((m) => m.file)).toContain("state/reduce.js");
    expect(modules.length).toBeGreaterThan(15);
  });

  it(`no module over ${MAX_MODULE_LINES} lines`, () => {
    expect(modules.filter((m) => m.lines > MAX_MODULE_LINES).map((m) => `${m.file}: ${m.lines}`)).toEqual([]);
  });

  it(`no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const long = modules.flatMap((m) => m.functions.filter((f) => f.lines > MAX_FUNCTION_LINES).map((f) => `${m.file} ${f.name}: ${f.lines}`));
    expect(long).toEqual([]);
  });

  it("layers import only what they may", () => {
    const bad = [];
    for (const m of modules) {
      const rule = LAYERS.find(([prefix]) => m.file.startsWith(prefix));
      expect(rule, `${m.file} has no layer`).toBeDefined();
      for (const imp of m.imports) if (!rule[1].some((allowed) => imp.startsWith(allowed))) bad.push(`${m.file} → ${imp}`);
    }
    expect(bad).toEqual([]);
  });
});
