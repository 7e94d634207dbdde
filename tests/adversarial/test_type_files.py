"""Hostile `--types` files (issue 40, item 2): the work is bounded by the file, and every failure is one line.

Before: the loader walked every path through the YAML node graph (nine levels of six-way mapping
aliases, 608 bytes: 14 s and 1.1 GB; 691 bytes: past 3 GB), read any file whole (`/dev/zero` never
ended, a FIFO blocked the kernel), parsed each file twice in pure Python and built five pydantic
models per type (a 5 MB file of 20,000 types: 41 s), and let `RecursionError`, `TypeError` and
`ValueError` out of deep lists, recursive aliases, long `extends` chains, `list[` ×2000, unhashable
`choices`, a field named `model_config` or a 5,000-digit number. After: each of these is one
`TypeDefinitionError` naming the file (and the line where there is one), found without expanding
anything; the file is read only if it is a regular file, and at most `MAX_TYPES_BYTES` of it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agentcell.errors import TypeDefinitionError
from agentcell.template import compile_template, load_types, yaml_read
from agentcell.template.yaml_read import MAX_ALIAS_VALUES, MAX_NESTING, MAX_TYPES_BYTES
from agentcell.template.yaml_types import MAX_TYPE_DEPTH, MAX_WRAPPERS
from tests.adversarial.bombs import alias_bomb

HANG_GUARD_S = 30
"""A hang guard for a load that must not block (not a time limit under test)."""


@pytest.fixture(params=["libyaml", "pyyaml"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each check holds with libyaml's parser and, where PyYAML was built without it, its own."""
    if request.param == "pyyaml":
        monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML here has no libyaml")
    yaml_read._loader_class.cache_clear()
    yield request.param
    yaml_read._loader_class.cache_clear()


def refusal(path: Path) -> str:
    with pytest.raises(TypeDefinitionError) as caught:
        load_types([path])
    message = str(caught.value)
    assert "\n" not in message and len(message) < 600
    return message


def test_an_alias_bomb_is_refused_by_counting_not_expanding(tmp_path: Path, parser: str) -> None:
    """Before: the 9-level file (552 bytes) took 35 s and 2.3 GB here before any error; the 6-level one
    (0.35 KB) was walked path by path (~50,000 of them). After: each node is visited once; the aliases'
    copies are counted from node sizes, and past `MAX_ALIAS_VALUES` the file is refused."""
    for levels in (6, 9, 30):
        path = tmp_path / f"bomb{levels}.yaml"
        path.write_text(alias_bomb(levels))
        message = refusal(path)
        assert message.startswith(f"{path}, line ")
        assert message.endswith(f"aliases repeat more than {MAX_ALIAS_VALUES:,} values (each alias copies the "
                                "value it names; an alias of aliases multiplies them)")  # fmt: skip


def test_aliases_that_copy_a_little_still_work(tmp_path: Path, parser: str) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text("name: A\nfields:\n  x: &t {type: int, ge: 0, description: a count}\n  y: *t\n  z: *t\n")
    model = load_types([path])["A"].model
    assert [(name, info.description) for name, info in model.model_fields.items()] == [
        ("x", "a count"), ("y", "a count"), ("z", "a count")]  # fmt: skip


@pytest.mark.parametrize(("text", "problem"), [
    ("name: T\nfields: &f\n  a: str\n  b: *f\n", "line 2: an alias refers to the value that contains it"),
    ("name: T\ndescription: &d [*d]\n", "line 2: an alias refers to the value that contains it"),
    ("name: T\nfields:\n  a: " + "[" * 3000 + "]" * 3000 + "\n", "line 3"),
    ("name: T\nfields:\n  a:\n    description: " + "[" * 40 + "]" * 40 + "\n",
     f"line 4: values are nested more than {MAX_NESTING} deep"),
    ("name: T\nfields:\n  a:\n    type: int\n    ge: " + "9" * 5000 + "\n", "a number of 5,000 digits is too long"),
], ids=["recursive-mapping", "recursive-list", "deep-flow-3000", "deep-flow-40", "5000-digits"])  # fmt: skip
def test_recursion_and_depth_in_yaml_are_one_line(tmp_path: Path, parser: str, text: str, problem: str) -> None:
    """Before: `RecursionError` (recursive aliases, 3,000 brackets) or `ValueError` (Python's digit limit).
    After: one line; the 3,000-deep list is refused by the parser's own bound or by `MAX_NESTING`."""
    path = tmp_path / "t.yaml"
    path.write_text(text)
    message = refusal(path)
    assert message.startswith(f"{path}, ") and problem in message


def test_brackets_too_deep_for_pyyaml_are_refused_before_it_scans(tmp_path: Path, parser: str) -> None:
    """PyYAML's own scanner looks back over every open bracket at each token (quadratic: 100,000 `[`
    would take hours); without libyaml a cheap count refuses them first."""
    path = tmp_path / "t.yaml"
    path.write_text("name: T\nfields:\n  a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    message = refusal(path)
    assert message.startswith(f"{path}, line 3") and "nest" in message


def chain(n: int, link: str, *, reverse: bool) -> str:
    docs = [f"---\nname: T{i}\n{link.format(i + 1)}\n" for i in range(n)] + [f"---\nname: T{n}\nfields: {{a: str}}\n"]
    return "".join(reversed(docs) if reverse else docs)


@pytest.mark.parametrize("link", ["extends: T{}", "fields: {{x: T{}}}"], ids=["extends", "field"])
@pytest.mark.parametrize("reverse", [False, True], ids=["outermost-first", "innermost-first"])
def test_a_3000_deep_type_chain_is_one_line(tmp_path: Path, link: str, reverse: bool) -> None:
    """Before: outermost first, `RecursionError`; innermost first (no recursion), pydantic built 3,000
    nested models (minutes). After: past `MAX_TYPE_DEPTH` types deep, one line naming the types."""
    path = tmp_path / "chain.yaml"
    path.write_text(chain(3000, link, reverse=reverse))
    message = refusal(path)
    assert f"types refer to types more than {MAX_TYPE_DEPTH} deep" in message


def test_a_chain_as_deep_as_allowed_builds(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(chain(MAX_TYPE_DEPTH - 1, "extends: T{}", reverse=False))
    assert len(load_types([path])) == MAX_TYPE_DEPTH


@pytest.mark.parametrize(("field", "problem"), [
    ("a: " + "list[" * 2000 + "str" + "]" * 2000, f"nests list[…]/optional[…] more than {MAX_WRAPPERS} deep"),
    ("a: {type: str, choices: [[1], {a: 1}]}", "field 'a': a choice is text, a number or true/false, got [1]"),
    ("model_config: str", "field name 'model_config' is taken by pydantic's models; choose another name"),
    ("model_fields: str", "field name 'model_fields' is taken by pydantic's models"),
    ("schema: str", "field name 'schema' is taken by pydantic's models"),
    ("a: {type: str, pattern: '('}", "field 'a': regex parse error: ( ^ error: unclosed group"),
    ("a: {type: int, ge: abc}", "field 'a': ValueError: 'ge' must be coercible to an integer"),
], ids=["list-2000", "unhashable-choices", "model_config", "model_fields", "schema", "bad-pattern", "ge-text"])  # fmt: skip
def test_fields_pydantic_cannot_take_are_one_line(tmp_path: Path, field: str, problem: str) -> None:
    """Before: `RecursionError` (`list[` ×2000), `TypeError` (unhashable choices, `model_config`), a
    `UserWarning` and a model whose `schema` was a field (`model_fields`, `schema`), or the first line
    of pydantic's nested message (`Error building "model" validator:`). After: one line naming the field."""
    path = tmp_path / "t.yaml"
    path.write_text(f"name: T\nfields:\n  {field}\n")
    message = refusal(path)
    assert message.startswith(f"{path}, line 3: type 'T': ") and problem in message


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """Before: `read_text` on a FIFO waited for a writer: the kernel blocked until one came. After: the
    kind is checked before opening."""
    fifo = tmp_path / "types.yaml"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_types([fifo])
            outcome.append(None)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_S)
    if worker.is_alive():  # the old code: release the reader so the thread ends, then fail
        with open(fifo, "w"):
            pass
        worker.join(HANG_GUARD_S)
        pytest.fail("load_types waited on a FIFO")
    assert isinstance(outcome[0], TypeDefinitionError)
    assert str(outcome[0]) == f"{fifo}: is a FIFO, not a file; --types reads YAML files"


def test_a_device_and_a_folder_of_devices_are_refused_unread(tmp_path: Path) -> None:
    """Before: `--types /dev/zero` read until memory ran out. After: a character device is refused."""
    assert refusal(Path("/dev/zero")) == "/dev/zero: is a character device, not a file; --types reads YAML files"
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    assert refusal(tmp_path) == f"{tmp_path / 'zero.yaml'}: is a character device, not a file; --types reads YAML files"


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    """Before: a 5 MB file of 20,000 types took 41 s (five minutes on this shared machine) and 1.2 GB.
    After: past `MAX_TYPES_BYTES` (all files of a load together) it is refused after reading that much."""
    one = "---\nname: Type{i}\ndescription: Type number {i}, a person named in the text\nfields:\n  name: {{type: str, required: true}}\n" \
          "  age: {{type: int, ge: 0, le: 150}}\n  skills: list[str]\n  born: date\n  mood: {{type: str, choices: [calm, cross]}}\n"  # fmt: skip
    big = tmp_path / "many.yaml"
    big.write_text("".join(one.format(i=i) for i in range(20_000)))
    assert big.stat().st_size > 4_500_000
    too_large = f"too large: --types reads at most {MAX_TYPES_BYTES:,} bytes of type files (all together)"
    assert refusal(big) == f"{big}: {too_large}"
    (tmp_path / "split").mkdir()
    for name in ("a", "b", "c"):  # each under half the limit, the three together over it
        text = big.read_text().replace("Type", f"Type{name}")[: MAX_TYPES_BYTES * 4 // 10]
        (tmp_path / "split" / f"{name}.yaml").write_text(text[: text.rindex("---")])
    assert refusal(tmp_path / "split") == f"{tmp_path / 'split' / 'c.yaml'}: {too_large}"


@pytest.mark.parametrize("name", ["x" * 5000, "a\x00b"], ids=["5000-chars", "nul"])
def test_a_hostile_file_name_is_one_line(tmp_path: Path, name: str) -> None:
    """Before: `OSError: File name too long` / `ValueError: embedded null byte` out of `is_dir()`."""
    message = refusal(tmp_path / name)
    assert "cannot read the type file" in message


def test_a_lone_surrogate_is_refused_with_its_line(tmp_path: Path, parser: str) -> None:
    """Before (PyYAML without libyaml): `UnicodeEncodeError` from building the model; libyaml refuses the
    escape itself. After: one line either way."""
    path = tmp_path / "t.yaml"
    path.write_text('name: T\ndescription: "\\ud800"\nfields: {a: str}\n')
    assert refusal(path).startswith(f"{path}, line 2")


def test_the_magic_boundary_still_gets_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(alias_bomb(9))
    with pytest.raises(TypeDefinitionError, match="aliases repeat more than"):
        compile_template("[[Bomb:b]]", types=path)


@pytest.mark.parametrize("text", ["name: " + "T" * 100_000 + " x\n", "name: " + "T" * 100_000 + "\nfields: {a: nope}\n",
                                  "name: T\nfields: {a: " + "x" * 100_000 + "}\n"], ids=["name", "type", "field-type"])  # fmt: skip
def test_a_huge_name_in_a_message_is_cut(tmp_path: Path, text: str) -> None:
    """Before: the whole 100,000-character name was repeated in the error (twice for a field type)."""
    path = tmp_path / "t.yaml"
    path.write_text(text)
    assert refusal(path).startswith(f"{path}, line ")
