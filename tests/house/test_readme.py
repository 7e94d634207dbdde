"""The README's magics reference and the magic's real parser agree, both ways."""

from __future__ import annotations

import re
from pathlib import Path

from agentcell.frontends.jupyter.commands import CONFIG_KEYS
from agentcell.frontends.jupyter.magics import SUBCOMMANDS, AgentMagics

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def section(title: str) -> str:
    start = README.index(title)
    end = README.index("\n#", start + len(title))
    return README[start:end]


def test_every_cell_magic_option_is_documented_and_exists() -> None:
    table = section("### `%%agent [options]`")
    documented = set(re.findall(r"`(--?[a-z][a-z-]*)", table))
    parser = AgentMagics.agent.parser  # built by IPython's @magic_arguments
    actual = {s for action in parser._actions for s in action.option_strings if s not in ("-h", "--help")}
    assert documented == actual


def test_every_line_magic_command_and_config_key_is_documented_and_exists() -> None:
    table = section("### `%agent COMMAND`")
    assert set(re.findall(r"`%agent ([a-z]+)", table)) == set(SUBCOMMANDS)
    config_row = next(line for line in table.splitlines() if line.startswith("| `%agent config"))
    keys = set(re.findall(r"`(\w+)`", config_row.split("|")[2]))
    assert keys == set(CONFIG_KEYS)


def test_the_two_setup_commands_and_the_fast_tier_exist() -> None:
    setup = section("## Set-up: two commands")
    commands = re.findall(r"^(scripts/\w+)( --\w+)?", setup, flags=re.M)
    assert commands == [("scripts/quickstart", ""), ("scripts/test", ""), ("scripts/test", " --fast")]
    root = Path(__file__).resolve().parents[2]
    for command, _ in commands:
        assert (root / command).stat().st_mode & 0o111, f"{command} is not executable"
    assert '"${1:-}" == "--fast"' in (root / "scripts" / "test").read_text()


def test_no_key_is_ever_set_with_env_magic_in_docs_or_notebooks() -> None:
    # `%env KEY=value` echoes the value into the cell's output, and so into the saved notebook.
    import re

    root = Path(__file__).resolve().parents[2]
    files = [root / "README.md", *sorted((root / "notebooks").glob("*.ipynb"))]
    pattern = re.compile(r"%env\s+\w*(KEY|TOKEN|SECRET|PASSWORD)\w*", re.IGNORECASE)
    offenders = [f.name for f in files if ".executed." not in f.name and pattern.search(f.read_text())]
    assert offenders == []


def test_the_layer_table_names_exactly_the_layers_of_the_import_contract() -> None:
    """Each row after the facade is one layer of pyproject.toml's `layers` contract, in order, naming its modules."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["id"] == "layers"]
    expected = [sorted(re.split(r"\s*[:|]\s*", layer.strip())) for layer in layers]
    table = section("### Architecture: layers and who owns what")
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    header, facade, *layer_rows = rows
    assert [header[0].strip(), facade[0].strip()] == ["layer", "facade"]
    named = [sorted(re.findall(r"`([a-z_]+)(?:/|\.py)`", row[1])) for row in layer_rows]
    assert named == expected


def test_the_slot_type_table_names_every_slot_type_and_alias() -> None:
    """A slot type added to `template/kinds.py` is documented for users in the README's type table."""
    from agentcell.template.kinds import KINDS, SLOT_TYPES

    lines = section("## Template reference").splitlines()
    start = lines.index("| type | value |") + 2
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("| "))
    named = {name for line in lines[start:end] for name in re.findall(r"`(\w+)`", line.split("|")[1])}
    expected = {name for kind in KINDS.values() if kind.name in SLOT_TYPES for name in (kind.name, *kind.aliases)}
    assert named == expected


def test_every_relative_link_in_the_readme_and_docs_names_a_file_of_the_repository() -> None:
    """The repository stands alone: its documents link only to files it holds (a moved module's page, a renamed
    doc, a note kept elsewhere would be a dead link)."""
    root = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
    dead = []
    for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path = (doc.parent / target).resolve()
            if doc.parent.name == "docs" and target.startswith("notebooks/"):
                # The site's notebook pages: scripts/docs writes executed copies of notebooks/ into docs/notebooks/
                # (git-ignored), so the page exists when the notebook does.
                path = root / target
            if not path.exists() or not path.is_relative_to(root):
                dead.append(f"{doc.relative_to(root)}: {target}")
    assert dead == []
