"""The template helpers: `image()`, `document()`, `audio()` and `table()` — the only names `{{ }}` gains.

A path is read and checked against what its name says (a `photo.png` that holds a PDF is refused, naming
both); a URL is handed to the provider as a URL after the private-address check (`limits.py`). A text
file given to `document()` stays text: it goes into the prompt as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import MediaError
from .convert import image_bytes
from .limits import check_part, check_url, max_part_bytes
from .parts import MediaKind, MediaPart, MediaUrl, media_part, type_name
from .sniff import describe_bytes, sniff
from .tables import COLS, ROWS, TableOptions, is_table, table_markdown

_BY_SUFFIX: dict[str, tuple[MediaKind, str]] = {
    ".png": ("image", "image/png"),
    ".jpg": ("image", "image/jpeg"),
    ".jpeg": ("image", "image/jpeg"),
    ".gif": ("image", "image/gif"),
    ".webp": ("image", "image/webp"),
    ".pdf": ("document", "application/pdf"),
    ".wav": ("audio", "audio/wav"),
    ".mp3": ("audio", "audio/mpeg"),
    ".ogg": ("audio", "audio/ogg"),
    ".flac": ("audio", "audio/flac"),
}
_TEXT_SUFFIXES = frozenset({".txt", ".md", ".csv", ".tsv", ".json", ".py", ".html", ".xml", ".yaml", ".yml", ".rst"})


def image(source: Any, *, allow_private: bool = False) -> MediaPart | MediaUrl:
    """`{{ image("plot.png") }}`, `{{ image("https://…/cat.jpg") }}`, `{{ image(fig) }}`: an image part, here."""
    if not isinstance(source, str | Path):
        data = source if isinstance(source, bytes) else image_bytes(source)
        found = None if data is None else sniff(data)
        if data is None or found is None or found.media_kind != "image":
            raise MediaError(f"image() takes a path, a URL, a figure or an image; got a {type(source).__name__}")
        return check_part(media_part(data, media_kind="image", media_type=found.media_type,
                                     width=found.width, height=found.height, name=type(source).__name__))
    return _file(source, "image", allow_private)


def document(source: str | Path, *, allow_private: bool = False) -> MediaPart | MediaUrl | str:
    """`{{ document("paper.pdf") }}`: a document part; a text file's text stays text."""
    if isinstance(source, str | Path) and Path(str(source)).suffix.lower() in _TEXT_SUFFIXES and not _is_url(source):
        return _read(Path(source)).decode("utf-8", "replace")
    return _file(source, "document", allow_private)


def audio(source: str | Path, *, allow_private: bool = False) -> MediaPart | MediaUrl:
    """`{{ audio("question.wav") }}`: an audio part."""
    return _file(source, "audio", allow_private)


def table(value: Any, rows: int = ROWS, cols: int | Sequence[str] = COLS, dtypes: bool = False) -> str:
    """`{{ table(df, rows=50, cols=["a", "b"], dtypes=True) }}`: a DataFrame as a bounded Markdown table."""
    if not is_table(value):
        raise MediaError(f"table() takes a pandas or polars DataFrame or Series; got a {type(value).__name__}")
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise MediaError(f"table(rows=…) takes a whole number of rows, 0 or more; got {rows!r}")
    columns: int | tuple[str, ...] = cols if isinstance(cols, int) else tuple(str(c) for c in cols)
    return table_markdown(value, TableOptions(rows=rows, cols=columns, dtypes=bool(dtypes)))


def _is_url(source: str | Path) -> bool:
    return isinstance(source, str) and source.split(":", 1)[0].lower() in ("http", "https")


def _file(source: str | Path, kind: MediaKind, allow_private: bool) -> MediaPart | MediaUrl:
    if not isinstance(source, str | Path):
        raise MediaError(f"{kind}() takes a path or a URL; got a {type(source).__name__}")
    if _is_url(source) or (isinstance(source, str) and "://" in source):
        return MediaUrl(url=check_url(str(source), allow_private=allow_private), media_kind=kind, name=str(source))
    path = Path(source).expanduser()
    data = _read(path)
    found = sniff(data)
    expected = _BY_SUFFIX.get(path.suffix.lower())
    if expected is not None and (found is None or found.media_type != expected[1]):
        raise MediaError(
            f"{path.name} is not a {type_name(expected[1])} {expected[0]}: its bytes are {describe_bytes(data)}"
        )
    if found is None:
        raise MediaError(f"{path.name} is {describe_bytes(data)}, not a file a model reads as {kind}")
    if found.media_kind != kind:
        raise MediaError(f"{path.name} is a {type_name(found.media_type)} {found.media_kind}, not {kind}")
    return check_part(media_part(data, media_kind=kind, media_type=found.media_type, width=found.width,
                                 height=found.height, name=path.name))


def _read(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_part_bytes():
            raise MediaError(f"{path.name} is {size:,} bytes; the limit is {max_part_bytes():,} per file "
                             "(AGENTCELL_MAX_IMAGE_BYTES)")
        return path.read_bytes()
    except OSError as exc:
        raise MediaError(f"cannot read {path}: {exc.strerror or exc}") from None


HELPERS = {"image": image, "document": document, "audio": audio, "table": table}
"""The names the template's Jinja environment gains."""
