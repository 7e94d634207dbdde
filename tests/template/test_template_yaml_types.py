"""`--types FILE` / `compile_template(types=)`: struckdown's YAML type definitions as slot types.

Written from struckdown's documented format (its type-definition docs and the files it ships in
`struckdown/types/`): one type per document, `fields` as type strings or maps with constraints.
Each bad file is a `TypeDefinitionError` naming the file and the line of the problem.
"""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from agentcell.engine import complete_async
from agentcell.errors import TemplateSyntaxError, TypeDefinitionError
from agentcell.template import compile_template, load_types

PERSON = """\
name: Person
description: A person named in the text
llm_config:
  temperature: 0.1
fields:
  name:
    type: str
    required: true
    description: Their full name
  age:
    type: int
    ge: 0
    le: 150
  born: date
  skills: list[str]
  mood:
    type: str
    choices: [calm, cross]
"""


def write(tmp_path: Path, text: str, name: str = "types.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def fields(model: Any) -> dict[str, bool]:
    return {name: info.is_required() for name, info in model.model_fields.items()}


def test_a_yaml_type_is_a_slot_type_with_its_fields_description_and_temperature(tmp_path: Path) -> None:
    template = compile_template("Who? [[!Person:p]]", types=write(tmp_path, PERSON))
    assert [(s.name, s.type, s.class_name) for s in template.slots] == [("p", "class", "Person")]
    options = template.slot_steps[0].render({}).options
    model = options.output_class
    assert model.__name__ == "Person" and model.__doc__ == "A person named in the text"
    assert fields(model) == {"name": True, "age": True, "born": True, "skills": True, "mood": True}
    assert options.temperature == 0.1
    ok = model(name="Ada", age=36, born="1815-12-10", skills=["maths"], mood="calm")
    assert ok.born == dt.date(1815, 12, 10)
    with pytest.raises(ValidationError):
        model(name="Ada", age=200, born="1815-12-10", skills=[], mood="calm")  # le: 150
    with pytest.raises(ValidationError):
        model(name="Ada", age=3, born="1815-12-10", skills=[], mood="happy")  # choices


def test_without_bang_only_fields_marked_required_must_be_given(tmp_path: Path) -> None:
    # struckdown's runtime rule: a slot without `!` gets every field optional except `required: true` ones.
    template = compile_template("[[Person:p]] [[!Person:q]]", types=write(tmp_path, PERSON))
    lenient, strict = (step.render({}).options.output_class for step in template.slot_steps)
    assert fields(lenient) == {"name": True, "age": False, "born": False, "skills": False, "mood": False}
    assert lenient(name="Ada").age is None
    assert issubclass(lenient, strict)  # isinstance(value, Person) holds for both


def test_type_level_required_makes_every_slot_strict_and_lowercase_names_work(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: superhero
        required: true
        fields:
          name: str
          age: {type: int, ge: 11, le: 500}
        """)
    template = compile_template("A hero: [[superhero:hero]]", types=path)
    assert [(s.name, s.class_name) for s in template.slots] == [("hero", "superhero")]
    assert fields(template.slot_steps[0].render({}).options.output_class) == {"name": True, "age": True}


def test_a_directory_several_documents_references_and_extends(tmp_path: Path) -> None:
    write(tmp_path, "name: Address\nfields:\n  city: str\n", "a.yaml")
    write(tmp_path, """\
        name: Contact
        fields:
          email: {type: str, pattern: '^[^@]+@[^@]+$'}
        ---
        name: Employee
        extends: Contact
        fields:
          home: Address
          previous: list[Address]
          manager: optional[str]
        """, "b.yml")
    types = load_types([tmp_path])
    assert sorted(types) == ["Address", "Contact", "Employee"]
    employee = types["Employee"].model
    assert issubclass(employee, types["Contact"].model)
    value = employee(email="a@b.c", home={"city": "Leeds"}, previous=[], manager=None)
    assert type(value.home) is types["Address"].model
    with pytest.raises(ValidationError):
        employee(email="nope", home={"city": "Leeds"}, previous=[], manager=None)
    assert fields(types["Employee"].lenient) == {"email": False, "home": False, "previous": False, "manager": False}


@pytest.mark.parametrize(("text", "message"), [
    ("name: X\nfields:\n  a: str\n  b: strng\n", "line 4: type 'X': unknown field type 'strng'; did you mean 'string'?"),
    ("name: X\nfields:\n  a: list[Thing]\n", "line 3: type 'X': unknown field type 'Thing'"),
    ("name: X\nfields:\n  a: [1, 2\n", "line 4, column 1: not valid YAML: expected ',' or ']'"),
    ("name: X\nfields:\n\ta: str\n", "line 3, column 1: not valid YAML: found character '\\t'"),
    ("fields:\n  a: str\n", "line 1: a type definition is a mapping with a 'name'"),
    ("name: text\nfields:\n  a: str\n", "line 1: type name 'text' is a built-in slot type"),
    ("name: has space\n", "line 1: type name 'has space' is not a name"),
    ("name: X\ncolour: red\n", "line 2: type 'X': unknown key 'colour'"),
    ("name: X\nfields:\n  a:\n    type: int\n    minimum: 3\n", "line 5: type 'X': field 'a': unknown key 'minimum'"),
    ("name: X\nfields:\n  a:\n    type: str\n    choices: []\n", "line 5: type 'X': field 'a': 'choices' must be a non-empty list"),
    ("name: X\nllm_config:\n  temperature: 9\n", "line 3: type 'X': llm_config: option 'temperature'"),
    ("name: X\nllm_config:\n  top_k: 3\n", "line 3: type 'X': llm_config: unknown key 'top_k'"),
    ("name: X\nextends: Y\n", "line 2: type 'X': unknown parent type 'Y'"),
    ("name: X\noptions:\n  min: a.ge\n", "line 2: type 'X': 'options:' (slot options mapped onto fields) is not supported"),
    ("name: X\nfields:\n  a: Y\n---\nname: Y\nfields:\n  b: X\n", "type 'X': types refer to each other in a cycle: X → Y → X"),
    ("name: X\nrequired: maybe\n", "line 2: type 'X': 'required' must be true or false"),
], ids=["unknown-type", "unknown-inner", "yaml-syntax", "yaml-tab", "no-name", "builtin-name", "bad-name",
        "unknown-key", "unknown-field-key", "empty-choices", "bad-temperature", "unknown-llm-key",
        "unknown-parent", "options", "cycle", "bad-required"])
def test_a_bad_type_file_names_file_line_and_problem_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TypeDefinitionError) as caught:
        compile_template("[[answer]]", types=path)
    assert str(caught.value).startswith(f"{path}, ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_type_defined_twice_names_both_files(tmp_path: Path) -> None:
    first, second = write(tmp_path, "name: X\n", "a.yaml"), write(tmp_path, "\n\nname: X\n", "b.yaml")
    with pytest.raises(TypeDefinitionError, match=rf"{second}, line 3: type 'X': defined twice \(also in {first}\)"):
        load_types([first, second])


def test_a_missing_file_is_a_type_definition_error(tmp_path: Path) -> None:
    with pytest.raises(TypeDefinitionError, match="cannot read the type file"):
        compile_template("[[answer]]", types=tmp_path / "nope.yaml")


def test_a_mapping_of_classes_binds_them_and_rejects_non_classes() -> None:
    class Pet(BaseModel):
        kind: str

    template = compile_template("[[pet:p]]", types={"pet": Pet})
    assert template.slot_steps[0].render({"pet": "shadowed"}).options.output_class is Pet  # bound, not looked up
    template.check_context(set())  # nothing needed from the notebook
    with pytest.raises(TypeDefinitionError, match=r"types=\{'pet': …\}: 3 is not a pydantic model"):
        compile_template("[[pet:p]]", types={"pet": 3})


def test_a_lowercase_name_without_types_stays_an_unknown_type() -> None:
    with pytest.raises(TemplateSyntaxError, match="unknown slot type 'superhero'"):
        compile_template("[[superhero:h]]")


def _answer_with(payload: dict[str, Any]) -> FunctionModel:
    async def reply(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[DeltaToolCalls]:
        yield {0: DeltaToolCall(name=info.output_tools[0].name, json_args=json.dumps({"response": payload}))}

    return FunctionModel(stream_function=reply)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_yaml_typed_slot_runs_end_to_end_and_gives_an_instance(tmp_path: Path) -> None:
    template = compile_template("Ada, 36, born 10 Dec 1815. [[Person:p]]", types=write(tmp_path, PERSON))
    model = template.slot_steps[0].render({}).options.output_class
    result = await complete_async(
        template, model=_answer_with({"name": "Ada Lovelace", "age": 36, "born": "1815-12-10"}), journal=False
    )
    value = result["p"]
    assert type(value) is model and isinstance(value, BaseModel)
    assert (value.name, value.age, value.born, value.skills) == ("Ada Lovelace", 36, dt.date(1815, 12, 10), None)
