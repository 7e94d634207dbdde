"""Hostile includes (issue 40, item 4): bounded in breadth and size, and kept inside their folders.

Before: depth and cycles were guarded, breadth and size were not (three 2.4 KB files that each
include the next 100 times reached 3.4 GB in 45 s); a 5,000-character include path raised a raw
`OSError` (File name too long); an include read any path, `/proc/self/environ` included, through an
absolute path, `..` or a symlink. After: one compile includes at most `MAX_INCLUDES` files and
`MAX_INCLUDED_BYTES` bytes (one `TemplateSyntaxError` naming the chain); a bad path is one sentence;
an include reads only inside the notebook's folder (the base directory) and the include paths,
unless the user allows any file with an include path of `/`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from agentcell.errors import TemplateSyntaxError
from agentcell.template import compile_template
from agentcell.template.includes import MAX_INCLUDED_BYTES, MAX_INCLUDES
from tests.adversarial.bombs import include_bomb


def refusal(cell: str, **kwargs: object) -> TemplateSyntaxError:
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template(cell, **kwargs)  # type: ignore[arg-type]
    assert "\n" not in caught.value.message and len(caught.value.message) < 600
    return caught.value


@pytest.mark.parametrize("breadth", [12, 100])
def test_an_include_bomb_ends_in_one_error_naming_the_chain(tmp_path: Path, breadth: int) -> None:
    """Before: 100-wide, 3.4 GB in 45 s; 12-wide compiled 4 MB of text without a word. After: the
    include that passes `MAX_INCLUDED_BYTES` ends the compile, and the error names the chain to it."""
    include_bomb(tmp_path, breadth)
    error = refusal('<include src="a.sd"/>\n[[answer]]', base_dir=tmp_path)
    assert error.message == (f"included text passes {MAX_INCLUDED_BYTES:,} bytes in all (at a.sd → b.sd → c.sd → d.sd); "
                             "include fewer or smaller files")  # fmt: skip
    assert error.name == str(tmp_path / "c.sd")
    assert len(str(error)) < 1000  # the 4 KB line the include sits on is shown cut around it


def test_a_bomb_of_empty_files_is_bounded_by_the_number_of_includes(tmp_path: Path) -> None:
    """Empty files cost no bytes, but 100³ of them is a million parses and nodes (30³ here: old code, 60 s)."""
    include_bomb(tmp_path, 30, text="")
    error = refusal('<include src="a.sd"/>\n[[answer]]', base_dir=tmp_path)
    assert error.message == (f"more than {MAX_INCLUDES} includes in one cell (at a.sd → b.sd → c.sd → d.sd); include "
                             "fewer files, or the same file fewer times")  # fmt: skip


def test_includes_within_the_bounds_still_compile(tmp_path: Path) -> None:
    include_bomb(tmp_path, 6)  # 258 includes, 600 KB
    template = compile_template('<include src="a.sd"/>\n[[answer]]', base_dir=tmp_path)
    assert [slot.name for slot in template.slots] == ["answer"]


@pytest.mark.parametrize("written", ["x" * 5000, "d/" * 2500 + "x.sd", "a\x00b.sd"], ids=["5000", "deep", "nul"])
def test_a_hostile_include_path_is_one_sentence(tmp_path: Path, written: str) -> None:
    """Before: `OSError: [Errno 36] File name too long` out of the parser. After: one sentence, the
    name shown cut in the middle."""
    error = refusal(f'{{% include "{written}" %}}\n[[answer]]', base_dir=tmp_path)
    assert error.message.startswith(("cannot look for included file '", "included file '"))
    assert len(str(error)) < 800


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """A notebook folder with a rubric, a folder of shared parts beside it, and a secret outside both."""
    (tmp_path / "secret.txt").write_text("API_KEY=sk-live-123")
    folder = tmp_path / "notebook"
    (folder / "parts").mkdir(parents=True)
    (folder / "rubric.sd").write_text("Grade strictly.")
    (folder / "parts" / "inner.sd").write_text('{% include "../rubric.sd" %}')  # `..` that stays inside
    (folder / "parts" / "leak.sd").symlink_to(tmp_path / "secret.txt")
    (folder / "parts" / "alias.sd").symlink_to(folder / "rubric.sd")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "tone.sd").write_text("Be kind.")
    return folder


def outside(written: str, resolved: Path) -> str:
    return (f"included file {written!r} is outside the notebook's folder and the include paths ({resolved}); "
            "an include reads only there unless you allow any file with --include-path / (include_paths=['/'] "
            "from Python)")  # fmt: skip


@pytest.mark.parametrize("written", ["/proc/self/environ", "{secret}", "../secret.txt", "parts/leak.sd",
                                     "parts/../../secret.txt"])  # fmt: skip
def test_an_include_outside_the_folders_is_refused(notebook: Path, written: str) -> None:
    """Before: each of these read the file into the prompt. After: refused, naming where it led."""
    written = written.format(secret=notebook.parent / "secret.txt")
    error = refusal(f'<include src="{written}"/>\n[[answer]]', base_dir=notebook)
    resolved = Path(written if written.startswith("/") else notebook / written).resolve()
    assert error.message == outside(written, resolved)


def test_includes_inside_the_folders_and_the_include_paths_are_read(notebook: Path) -> None:
    cell = ('<include src="parts/inner.sd"/> <include src="parts/alias.sd"/> <include src="tone.sd"/> '
            f'<include src="{notebook / "rubric.sd"}"/>\n[[answer]]')  # fmt: skip
    template = compile_template(cell, base_dir=notebook, include_paths=[notebook.parent / "shared"])
    assert [slot.name for slot in template.slots] == ["answer"]


def test_an_include_path_of_root_allows_any_file(notebook: Path) -> None:
    """The opt-in: `--include-path /` (include_paths=['/'])."""
    cell = f'<include src="{notebook.parent / "secret.txt"}"/> <include src="parts/leak.sd"/>\n[[answer]]'
    template = compile_template(cell, base_dir=notebook, include_paths=["/"])
    assert [slot.name for slot in template.slots] == ["answer"]


def test_the_working_directory_is_the_folder_when_no_base_is_given(
    notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(notebook)
    assert [s.name for s in compile_template('<include src="rubric.sd"/>\n[[a]]').slots] == ["a"]
    error = refusal('<include src="../secret.txt"/>\n[[a]]')
    assert error.message == outside("../secret.txt", notebook.parent / "secret.txt")


def test_a_fifo_include_is_not_opened(notebook: Path) -> None:
    """A FIFO is no regular file: found as none, so nothing waits for a writer."""
    os.mkfifo(notebook / "pipe.sd")
    error = refusal('<include src="pipe.sd"/>\n[[a]]', base_dir=notebook)
    assert error.message == f"included file 'pipe.sd' not found (searched: {notebook})"


@pytest.fixture
def ip(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.setenv("AGENTCELL_MODEL", "offline:fast")
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell(config=config)
    shell.run_line_magic("load_ext", "agentcell")
    yield shell
    shell.run_line_magic("agent", "stop")


def test_the_magic_refuses_in_one_sentence_and_include_path_root_opts_in(
    ip: InteractiveShell, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through `%%agent`: the refusal is the magic's one-line `UsageError` (with the usual source line and
    caret); `--include-path /` lets the same cell run."""
    monkeypatch.chdir(notebook)  # the kernel's working directory is the notebook's folder
    secret = notebook.parent / "secret.txt"
    cell = f'<include src="{secret}"/>\n[[answer]]'
    with pytest.raises(UsageError) as caught:
        ip.run_cell_magic("agent", "-o r", cell)
    first, *rest = str(caught.value).split("\n")
    assert first == f"<%%agent cell>, line 2, column 1: {outside(str(secret), secret)}" and len(rest) == 2
    ip.run_cell_magic("agent", "-o r --include-path /", cell)
    assert ip.user_ns["r"].status == "completed"
