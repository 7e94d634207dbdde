// A tool's JSON schema (as the model receives it) read back as the Python signature a learner wrote:
// `def lookup(code: str, limit: int = 5)`. Pure (no DOM); the Python twin is `static_teaching_sig.py`.

const SIMPLE = { string: "str", integer: "int", number: "float", boolean: "bool", null: "None" };

function refName(ref) {
  const s = String(ref);
  return s.slice(s.lastIndexOf("/") + 1) || "Any";
}

function literal(v) {
  if (typeof v === "string") return `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return String(v);
}

/** A JSON-schema node → a Python type annotation ("str", "list[int]", "Literal['a', 'b']", "str | None"). */
export function pyType(node, depth = 0) {
  if (!node || typeof node !== "object" || depth > 6) return "Any";
  if (node.$ref) return refName(node.$ref);
  if (Array.isArray(node.enum)) return `Literal[${node.enum.map(literal).join(", ")}]`;
  if ("const" in node) return `Literal[${literal(node.const)}]`;
  const union = node.anyOf ?? node.oneOf;
  if (Array.isArray(union)) return [...new Set(union.map((n) => pyType(n, depth + 1)))].join(" | ");
  const t = node.type;
  if (Array.isArray(t)) return t.map((x) => pyType({ ...node, type: x }, depth + 1)).join(" | ");
  if (t in SIMPLE) return SIMPLE[t];
  if (t === "array") {
    if (Array.isArray(node.prefixItems)) return `tuple[${node.prefixItems.map((n) => pyType(n, depth + 1)).join(", ")}]`;
    return `list[${node.items ? pyType(node.items, depth + 1) : "Any"}]`;
  }
  if (t === "object") {
    if (node.title && node.properties) return String(node.title);
    const extra = node.additionalProperties;
    return extra && typeof extra === "object" ? `dict[str, ${pyType(extra, depth + 1)}]` : "dict";
  }
  return "Any";
}

function defaultText(v) {
  if (v === null || typeof v !== "object") return literal(v);
  try {
    return JSON.stringify(v);
  } catch {
    return "...";
  }
}

/** The parameters of a tool's schema: [{name, type, required, default?, description?}] in schema order. */
export function params(schema) {
  const props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required.map(String) : []);
  return Object.entries(props).map(([name, node]) => {
    const p = { name, type: pyType(node), required: required.has(name) };
    if (node && typeof node === "object") {
      if ("default" in node) p.default = defaultText(node.default);
      if (node.description) p.description = String(node.description);
    }
    return p;
  });
}

function paramText(p) {
  if (p.required) return `${p.name}: ${p.type}`;
  return `${p.name}: ${p.type} = ${p.default ?? "None"}`;
}

/** `def name(a: str, b: int = 2)`, wrapped one parameter a line when longer than `width`. */
export function signature(name, schema, width = 72) {
  const ps = params(schema).map(paramText);
  const one = `def ${name}(${ps.join(", ")})`;
  if (one.length <= width || ps.length < 2) return one;
  return `def ${name}(\n${ps.map((p) => `    ${p},`).join("\n")}\n)`;
}

/** The signature with its docstring and parameter notes, as a learner would read the function. */
export function pythonSource(name, description, schema) {
  const lines = [`${signature(name, schema)}:`];
  const doc = String(description ?? "").trim();
  const notes = params(schema).filter((p) => p.description);
  if (doc || notes.length) {
    const body = doc ? doc.split("\n") : [];
    if (notes.length) {
      if (body.length) body.push("");
      body.push("Args:", ...notes.map((p) => `    ${p.name}: ${p.description}`));
    }
    if (body.length === 1) lines.push(`    """${body[0]}"""`);
    else lines.push('    """' + body[0], ...body.slice(1).map((l) => (l ? `    ${l}` : "")), '    """');
  }
  lines.push("    ...");
  return lines.join("\n");
}
