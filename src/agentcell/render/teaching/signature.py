"""A tool's JSON schema read back as the Python signature a learner wrote (mirror of `js/src/teach/signature.js`).

`def room_of(module_code: str, term: str = 'autumn')`, then the docstring: the saved teaching view and
the lesson export show each offered tool the way the live widget does.
"""

from __future__ import annotations

import json
from typing import Any

_SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _literal(value: Any) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if value is None:
        return "None"
    if value is True:
        return "True"
    if value is False:
        return "False"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # JSON has one number type: 2.0 reads as 2 (as in JavaScript)
    return str(value)


def py_type(node: Any, depth: int = 0) -> str:
    """A JSON-schema node as a Python annotation (`str`, `list[int]`, `Literal['a']`, `str | None`)."""
    if not isinstance(node, dict) or depth > 6:
        return "Any"
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1] or "Any"
    if isinstance(node.get("enum"), list):
        return f"Literal[{', '.join(_literal(v) for v in node['enum'])}]"
    if "const" in node:
        return f"Literal[{_literal(node['const'])}]"
    union = node.get("anyOf", node.get("oneOf"))
    if isinstance(union, list):
        return " | ".join(dict.fromkeys(py_type(n, depth + 1) for n in union))
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(py_type({**node, "type": k}, depth + 1) for k in kind)
    if isinstance(kind, str) and kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        if isinstance(node.get("prefixItems"), list):
            return f"tuple[{', '.join(py_type(n, depth + 1) for n in node['prefixItems'])}]"
        return f"list[{py_type(node['items'], depth + 1) if node.get('items') else 'Any'}]"
    if kind == "object":
        if node.get("title") and node.get("properties"):
            return str(node["title"])
        extra = node.get("additionalProperties")
        return f"dict[str, {py_type(extra, depth + 1)}]" if isinstance(extra, dict) else "dict"
    return "Any"


def params(schema: Any) -> list[dict[str, Any]]:
    """The parameters of a tool's schema, in schema order: `{name, type, required, default?, description?}`."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    required = set(map(str, schema.get("required", []))) if isinstance(schema, dict) else set()
    out = []
    for name, node in (props or {}).items():
        p: dict[str, Any] = {"name": name, "type": py_type(node), "required": name in required}
        if isinstance(node, dict):
            if "default" in node:
                default = node["default"]
                p["default"] = _literal(default) if not isinstance(default, dict | list) else json.dumps(default)
            if node.get("description"):
                p["description"] = str(node["description"])
        out.append(p)
    return out


def signature(name: str, schema: Any, width: int = 72) -> str:
    """`def name(a: str, b: int = 2)`, one parameter a line when longer than `width`."""
    ps = [f"{p['name']}: {p['type']}" if p["required"] else f"{p['name']}: {p['type']} = {p.get('default', 'None')}"
          for p in params(schema)]
    one = f"def {name}({', '.join(ps)})"
    if len(one) <= width or len(ps) < 2:
        return one
    return "def " + name + "(\n" + "\n".join(f"    {p}," for p in ps) + "\n)"


def python_source(name: str, description: str, schema: Any) -> str:
    """The signature with its docstring and parameter notes, as a learner reads the function."""
    lines = [f"{signature(name, schema)}:"]
    doc = str(description or "").strip()
    notes = [p for p in params(schema) if p.get("description")]
    body = doc.split("\n") if doc else []
    if notes:
        if body:
            body.append("")
        body += ["Args:", *(f"    {p['name']}: {p['description']}" for p in notes)]
    if len(body) == 1:
        lines.append(f'    """{body[0]}"""')
    elif body:
        lines += ['    """' + body[0], *(f"    {line}" if line else "" for line in body[1:]), '    """']
    lines.append("    ...")
    return "\n".join(lines)
