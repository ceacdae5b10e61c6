"""The schemas tools/list advertises, generated from the registry: what a client can rely on in them."""

import pytest
from jsonschema import Draft202012Validator

from agent_workspace.domain.tasks import TaskView
from agent_workspace.mcp_server.answer_checks import AnswerMismatch, check_answer
from agent_workspace.mcp_server.tool_schemas import input_schema, output_schema
from agent_workspace.tool_registry import Action, Answer, NoPayload, Tool
from agent_workspace.tools import REGISTRY
from agent_workspace.tools.answers.task import TaskAnswer


@pytest.mark.parametrize("tool", list(REGISTRY), ids=lambda t: t.name)
def test_every_output_schema_is_valid_2020_12_and_each_branch_is_a_closed_object(tool):
    schema = output_schema(tool)
    Draft202012Validator.check_schema(schema)
    for branch in schema["oneOf"]:
        model = schema["$defs"][branch["$ref"].rsplit("/", 1)[1]]
        assert model["type"] == "object" and model["additionalProperties"] is False


@pytest.mark.parametrize("tool", list(REGISTRY), ids=lambda t: t.name)
def test_every_action_with_fields_has_its_branch_in_the_input_schema(tool):
    schema = input_schema(tool)
    Draft202012Validator.check_schema(schema)
    titled = [branch["title"] for branch in schema["properties"]["payload"]["anyOf"]]
    with_fields = [a.name for a in tool.all_actions() if a.payload.model_fields]
    assert titled == with_fields


def test_a_task_answer_is_the_tasks_rest_view_closed_so_a_new_field_reaches_the_schema():
    assert issubclass(TaskAnswer, TaskView)
    properties = output_schema(REGISTRY.tool("task"))["$defs"]["TaskAnswer"]["properties"]
    assert set(TaskView.model_fields) <= set(properties)
    assert TaskAnswer.model_config["extra"] == "forbid"


class _Thing(Answer):
    id: str


class _Other(Answer):
    name: str


def _tool() -> Tool:
    return Tool(
        name="thing",
        summary="Things.",
        actions=(
            Action("get", "Get.", NoPayload, lambda call, p: None, result=_Thing, text_too=True),
            Action("find", "Find.", NoPayload, lambda call, p: None, result=_Other),
            Action("make", "Make.", NoPayload, lambda call, p: None),
            Action("either", "Either.", NoPayload, lambda call, p: None, result=(_Thing, _Other)),
            Action("refuse", "Refuses.", NoPayload, lambda call, p: None, result=()),
        ),
    )


def test_an_answer_must_be_one_of_its_own_actions_results():
    tool = _tool()
    get, find, make, either, _ = tool.actions

    check_answer(tool, get, {"id": "a"})
    check_answer(tool, get, {"text": "null"})
    check_answer(tool, make, {"text": "made"})
    with pytest.raises(AnswerMismatch, match="not one of find's own results"):
        check_answer(tool, find, {"id": "a"})  # valid for the tool, but another action's answer
    with pytest.raises(AnswerMismatch, match="thing get"):
        check_answer(tool, get, {"id": "a", "extra": 1})  # closed: an undeclared field is a mismatch
    check_answer(tool, either, {"id": "a"})
    check_answer(tool, either, {"name": "b"})
    with pytest.raises(AnswerMismatch, match="thing either"):
        check_answer(tool, either, {"text": "made"})


def test_the_output_schema_names_the_actions_of_each_branch():
    branches = output_schema(_tool())["oneOf"]

    assert [b["description"] for b in branches] == [
        "The answer of get, either.",
        "The answer of get, make, help.",  # the text answer, first met at get; refuse answers nothing
        "The answer of find, either.",
    ]
