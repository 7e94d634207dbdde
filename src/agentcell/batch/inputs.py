"""A batch's rows: what `--over` / `map(rows=...)` may be, read into plain dict rows.

Accepted: a pandas DataFrame (each row's columns), a list of dicts, a list of strings
(each string is `{{ item }}`), or a glob string of files (`{{ filename }}`, `{{ text }}`; `.csv` and
`.json` files give one row per record instead, with `filename` added). Everything is checked before
any row starts: a value of another kind, a glob that matches nothing, and a row that lacks a variable
the template reads raise `BatchError` with one line naming the row and the variable. A row that is
malformed on its own (a CSV line with more fields than its header) keeps a `problem`: it fails alone
and the other rows run. A row's values are the user's own: anything may be in them (see `row_key`).
"""

from __future__ import annotations

import csv
import glob as globbing
import hashlib
import json
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic_core import to_jsonable_python

from .errors import BatchError

TEXT_SUFFIXES = frozenset({".txt", ".md"})
RECORD_SUFFIXES = frozenset({".json", ".csv", ".jsonl"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One input row: its position, its fields (template variables) and a hash of its content."""

    index: int
    """0-based position in the input (the table's row number)."""
    fields: Mapping[str, Any]
    """The row's template variables (on top of the notebook namespace)."""
    key: str
    """sha256 of the row's content (canonical JSON): with the template hash, what `--resume` matches."""
    problem: str | None = None
    """Why the row cannot run as given (a CSV line with more fields than its header): the row fails with this
    sentence as its error and the other rows run."""

    @property
    def variables(self) -> dict[str, Any]:
        """The fields a template may read: a DataFrame column named 0 stays in the row (and its table) but is no
        variable (one would fail the row's rendering)."""
        return {k: v for k, v in self.fields.items() if isinstance(k, str)}


@dataclass(frozen=True, slots=True)
class _Malformed:
    """A record read with a problem: its fields as far as they could be read, and the sentence saying what is wrong."""

    fields: dict[str, Any]
    problem: str


def row_key(fields: Mapping[str, Any]) -> str:
    """The content hash of a row: the same fields and values give the same key in any process.

    Any row has a key: text that is not valid UTF-8 (lone surrogates) is hashed as it is, bytes that are not
    UTF-8 as base64, a value whose `repr` raises by its type. A row that cannot be written as JSON at all (a
    dict that contains itself, thousands of levels deep) gets a key of its own, unlike any other: `--resume`
    runs it again rather than take it for another row.
    """
    for attempt in (_canonical, _canonical_safe):
        try:
            return hashlib.sha256(attempt(fields).encode("utf-8", "surrogatepass")).hexdigest()
        except Exception:  # whatever the row's values raise, the next attempt copes
            continue
    return hashlib.sha256(f"unmatched row {uuid.uuid4().hex}".encode()).hexdigest()


def _canonical(fields: Mapping[str, Any]) -> str:
    return json.dumps(to_jsonable_python(dict(fields), fallback=repr), sort_keys=True, ensure_ascii=False)


def _canonical_safe(fields: Mapping[str, Any]) -> str:
    value = to_jsonable_python({str(k): v for k, v in fields.items()}, fallback=safe_repr, bytes_mode="base64")
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def safe_repr(value: object) -> str:
    """`repr(value)`, or its type's name when its `repr` raises (a value in a row is the user's: anything goes)."""
    try:
        return repr(value)
    except Exception:  # a broken __repr__ is the value's problem, not the batch's
        return f"<{type(value).__name__} whose repr failed>"


def read_rows(over: Any, *, max_rows: int | None = None) -> list[Row]:
    """`over` as a list of rows (the first `max_rows` when set).

    Raises:
        BatchError: `over` is none of the accepted kinds, a glob matched nothing, or a file cannot be read.
    """
    if max_rows is not None and (isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1):
        raise BatchError(f"max_rows must be a positive whole number (the first rows to run), got {max_rows!r}")
    records = list(_records(over))
    if max_rows is not None:
        records = records[:max_rows]
    rows = []
    for i, record in enumerate(records):
        fields, problem = (record.fields, record.problem) if isinstance(record, _Malformed) else (record, None)
        rows.append(Row(index=i, fields=fields, key=row_key(fields), problem=problem))
    return rows


def check_rows(rows: Sequence[Row], needed: Collection[str], available: Collection[str]) -> None:
    """Raise `BatchError` for the first row that lacks a variable the template reads.

    `needed` are the template's free variables, `available` the names the notebook and `--context`
    give every row.
    """
    missing_everywhere = set(needed) - set(available)
    if not missing_everywhere:
        return
    for row in rows:
        missing = sorted(missing_everywhere - set(row.fields))
        if missing and row.problem is None:  # a malformed row fails with its own problem
            have = ", ".join(sorted(row.fields)) or "none"
            raise BatchError(
                f"row {row.index} has no {missing[0]!r}, which the template reads as {{{{ {missing[0]} }}}} "
                f"(the row's fields: {have}; the notebook does not define it either)"
            )


def _records(over: Any) -> Iterable[dict[str, Any] | _Malformed]:
    if isinstance(over, str | Path):
        return _from_glob(str(over))
    if _is_dataframe(over):
        return _from_dataframe(over)
    if isinstance(over, Mapping):
        raise BatchError(
            "--over got a dict; give a list of dicts (one per row), a DataFrame, a list of strings or a glob of files"
        )
    if isinstance(over, Sequence | tuple) and not isinstance(over, bytes | bytearray):
        return _from_list(over)
    kinds = "a DataFrame, a list of dicts, a list of strings or a glob of files"
    raise BatchError(f"--over must be {kinds}; got a {type(over).__name__}")


def _is_dataframe(value: Any) -> bool:
    cls = type(value)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pandas")


def _from_dataframe(frame: Any) -> list[dict[str, Any]]:
    # Columns that are not identifiers stay in the row (kept with --keep) though no `{{ }}` can read them.
    return [dict(zip(frame.columns, values, strict=True)) for values in frame.itertuples(index=False, name=None)]


def _from_list(items: Sequence[Any]) -> list[dict[str, Any]]:
    if len({isinstance(item, str) for item in items}) > 1:
        raise BatchError("--over mixes strings and other rows; give all dicts or all strings")
    out: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            out.append({"item": item})
        elif isinstance(item, Mapping):
            keys = [k for k in item if not isinstance(k, str)]
            if keys:
                raise BatchError(f"--over row {i}: key {keys[0]!r} is not a string")
            out.append(dict(item))
        else:
            kind = type(item).__name__
            raise BatchError(f"--over row {i} is a {kind}; rows must be all dicts (fields) or all strings")
    return out


def _from_glob(pattern: str) -> list[dict[str, Any] | _Malformed]:
    path = Path(pattern).expanduser()
    matches = sorted(globbing.glob(str(path), recursive=True)) if globbing.has_magic(str(path)) else (
        [str(path)] if path.exists() else [])
    files = [Path(m) for m in matches if Path(m).is_file()]
    if not files:
        raise BatchError(f"--over {pattern!r} matches no file")
    out: list[dict[str, Any] | _Malformed] = []
    for file in files:
        out.extend(_from_file(file))
    return out


def _from_file(file: Path) -> list[dict[str, Any] | _Malformed]:
    suffix = file.suffix.lower()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BatchError(f"--over: cannot read {file}: {exc}") from None
    if suffix == ".csv":
        return _csv_records(file, text)
    if suffix in (".json", ".jsonl"):
        return [{**record, "filename": str(file)} for record in _json_records(file, text, suffix)]
    return [{"filename": str(file), "text": text}]


def _csv_records(file: Path, text: str) -> list[dict[str, Any] | _Malformed]:
    """One record per CSV row; a row with more fields than the header names is `_Malformed` (it fails alone)."""
    out: list[dict[str, Any] | _Malformed] = []
    reader = csv.DictReader(text.splitlines())
    for row in reader:
        extra = row.pop(None, None)  # DictReader files the fields beyond the header under the key None
        fields: dict[str, Any] = {**row, "filename": str(file)}
        if extra is None:
            out.append(fields)
            continue
        names = len(reader.fieldnames or ())
        out.append(_Malformed(fields, f"{file} line {reader.line_num} has {names + len(extra)} fields but its header "
                                      f"names {names}; the row was not run (quote a value that holds a comma)"))
    return out


def _json_records(file: Path, text: str, suffix: str) -> list[dict[str, Any]]:
    try:
        if suffix == ".jsonl":
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except ValueError as exc:
        raise BatchError(f"--over: {file} is not valid JSON: {exc}") from None
    items = data if isinstance(data, list) else [data]
    if not all(isinstance(item, dict) for item in items):
        return [{"text": text}]
    return items
