"""The built-in actions: `set`, `timestamp`, `break`, `noop`, `history`, `evidence`, `markdownify`,
`fetch` and `search` (struckdown's, with their parameters in its order).

`fetch` reads the URL it is given. `search` needs a search service that answers JSON: its `endpoint=`
option, or `$AGENTCELL_SEARCH_URL`, is a URL with `{query}` in it (a SearXNG instance's
`https://…/search?format=json&q={query}`, say); without one it fails and says so. Neither runs
unless a template names it, and both time out (`timeout=`, seconds).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import httpx

from ..actions import ActionPolicy


@dataclass(frozen=True, slots=True)
class Break:
    """What `break` returns: the run ends after this action."""

    value: Any = None


def set_(value: Any = "") -> Any:
    """The value itself (quoted text, a number, or a variable's value): `[[@set:x|"text"]]`."""
    return value


def timestamp(format: str | None = None) -> str:
    """The current local time, ISO 8601 (with its UTC offset), or formatted with `strftime`."""
    now = datetime.now().astimezone()
    return now.strftime(format) if format else now.isoformat(timespec="seconds")


def break_(when: bool = True) -> Any:
    """End the run here when `when` holds (the slots after it do not run; the run completes)."""
    return Break(True) if when else False


def noop() -> str:
    """Nothing."""
    return ""


def history(
    filename: str | None = None,
    first: str = "user",
    n: int | None = None,
    role: str | None = None,
    context: Any = None,
) -> list[dict[str, str]]:
    """Earlier conversation as messages: one per non-empty line of `filename` (or the context's
    `_history_file`), roles alternating from `first`; `role` keeps one side, `n` the last few."""
    path = filename or (context or {}).get("_history_file")
    if not path:
        raise ValueError("history needs a file: [[@history:past|\"conversation.txt\"]]")
    lines = [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    other = "assistant" if first.startswith("user") else "user"
    roles = ["user" if first.startswith("user") else "assistant", other]
    messages = [{"role": roles[i % 2], "content": line} for i, line in enumerate(lines)]
    if role is not None:
        messages = [m for m in messages if m["role"] == role]
    return messages[-n:] if n else messages


def markdownify(html: str) -> str:
    """HTML as readable text: headings, paragraphs, list items and links kept; scripts and styles dropped."""
    reader = _TextOfHtml()
    reader.feed(html)
    reader.close()
    text = "".join(reader.out)
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+", " ", text)).strip()


async def fetch(url: str, raw: bool = False, timeout: float = 8.0, max_chars: int = 64_000) -> str:
    """The page at `url` (`https://` added if missing), as text unless `raw`, cut at `max_chars`."""
    if "://" not in url:
        url = "https://" + url
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        response = await client.get(url)
    response.raise_for_status()
    body = response.text
    if not raw and "html" in response.headers.get("content-type", "html"):
        body = markdownify(body)
    return body if len(body) <= max_chars else body[:max_chars] + f"\n\n[… cut at {max_chars} characters]"


async def search(query: str, max_results: int = 5, endpoint: str | None = None, timeout: float = 8.0) -> str:
    """Search results for `query` from the configured search service, as a short Markdown list."""
    template = endpoint or os.environ.get("AGENTCELL_SEARCH_URL")
    if not template or "{query}" not in template:
        raise ValueError(
            "search needs a search service that answers JSON: set AGENTCELL_SEARCH_URL to a URL with {query} in it "
            "(or pass endpoint=…)"
        )
    async with httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client:
        response = await client.get(template.replace("{query}", quote_plus(query)))
    response.raise_for_status()
    data = response.json()
    hits = data.get("results", []) if isinstance(data, dict) else data
    lines = []
    for hit in list(hits)[:max_results]:
        title, link = hit.get("title", ""), hit.get("url", hit.get("link", ""))
        snippet = hit.get("content", hit.get("snippet", ""))
        lines.append(f"- [{title}]({link}): {snippet}".rstrip(": "))
    return "\n".join(lines) if lines else f"No results found for {query!r}."


def evidence(query: str | list[str], n: int = 3, folder: str | None = None, context: Any = None) -> str:
    """The `n` passages (about 500 characters each) of the `.txt`/`.md` files in `folder` (or the
    context's `evidence_folder`, else `./evidence`) that best match `query` (BM25), each labelled."""
    root = Path(folder or (context or {}).get("evidence_folder") or "evidence")
    if not root.is_dir():
        raise ValueError(f"evidence needs a folder of .txt/.md files; {str(root)!r} is not one")
    chunks = [(path.name, chunk) for path in sorted(root.rglob("*")) if path.suffix in (".txt", ".md")
              for chunk in _chunks(path.read_text(encoding="utf-8", errors="replace"))]  # fmt: skip
    words = _words(" ".join(query) if isinstance(query, list) else query)
    ranked = sorted(range(len(chunks)), key=lambda i: -_bm25(words, chunks, i))[:n]
    return "\n\n".join(f"[{chunks[i][0]}]\n{chunks[i][1]}" for i in ranked if _bm25(words, chunks, i) > 0)


def _chunks(text: str, size: int = 500) -> list[str]:
    paragraphs, out, current = re.split(r"\n\s*\n", text), [], ""
    for paragraph in paragraphs:
        if current and len(current) + len(paragraph) > size:
            out.append(current.strip())
            current = ""
        current += paragraph + "\n\n"
    return [*out, current.strip()] if current.strip() else out


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _bm25(query: list[str], chunks: list[tuple[str, str]], index: int, k1: float = 1.5, b: float = 0.75) -> float:
    docs = [Counter(_words(text)) for _, text in chunks]
    average = sum(sum(d.values()) for d in docs) / max(len(docs), 1)
    doc, length, score = docs[index], sum(docs[index].values()), 0.0
    for word in set(query):
        having = sum(1 for d in docs if word in d)
        if not having or word not in doc:
            continue
        idf = math.log(1 + (len(docs) - having + 0.5) / (having + 0.5))
        tf = doc[word]
        score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / max(average, 1)))
    return score


class _TextOfHtml(HTMLParser):
    _BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article"})

    def __init__(self) -> None:
        super().__init__()
        self.out: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript"):
            self._skip += 1
        elif tag in self._BLOCKS:
            self.out.append("\n\n" if tag != "li" else "\n- ")
            if tag.startswith("h") and len(tag) == 2:
                self.out.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.out.append(data)


_NO_SIDE_EFFECTS = ActionPolicy(role="none")
BUILTINS: dict[str, tuple[Any, ActionPolicy]] = {
    "set": (set_, _NO_SIDE_EFFECTS),
    "timestamp": (timestamp, _NO_SIDE_EFFECTS),
    "break": (break_, _NO_SIDE_EFFECTS),
    "noop": (noop, _NO_SIDE_EFFECTS),
    "history": (history, ActionPolicy()),
    "evidence": (evidence, ActionPolicy()),
    "markdownify": (markdownify, ActionPolicy()),
    "fetch": (fetch, ActionPolicy()),
    "search": (search, ActionPolicy()),
}
"""Name → (function, policy). `set`, `timestamp`, `break` and `noop` add nothing to the conversation
(only `{{ var }}` sees their value); the others add their result as a user turn, as struckdown does."""
