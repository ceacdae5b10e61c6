"""Each answer checked against the outputSchema its tool lists, failing loudly on a mismatch: on in the tests
(WORKSPACE_CHECK_ANSWERS), off by default, so a Lambda never imports a JSON Schema validator for it
(`mcp_server.dispatch` imports this module only when the check is on)."""

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from agent_workspace.mcp_server.surfaces import ListedTool
from agent_workspace.mcp_server.tool_schemas import flat_output_schema, models_of, output_schema, result_models
from agent_workspace.tool_registry import Action, Tool


def check_listed_answer(listed: ListedTool, action: Action, answer: dict[str, Any]) -> None:
    """A presented answer against what its tool lists (on in the tests, like `check_answer`)."""
    problem = next(iter(_listed_validator(listed, action).iter_errors(answer)), None)
    if problem is not None:
        raise AnswerMismatch(f"{listed.name}: the answer does not match its outputSchema: {problem.message}")


def check_answer(tool: Tool, action: Action, answer: dict[str, Any]) -> None:
    """Fail loudly where an answer is not what the tool advertises (on in the tests: WORKSPACE_CHECK_ANSWERS)."""
    problem = next(iter(_validator(tool).iter_errors(answer)), None)
    if problem is None and not _action_validator(tool, action).is_valid(answer):
        problem = f"valid for the tool, but not one of {action.name}'s own results"
    if problem is not None:
        raise AnswerMismatch(f"{tool.name} {action.name}: the answer does not match the outputSchema: {problem}")


class AnswerMismatch(AssertionError):
    """An action answered something its tool's outputSchema does not allow: a bug in the action or its model."""


@cache
def _listed_validator(listed: ListedTool, action: Action) -> Draft202012Validator:
    schema = flat_output_schema(listed, action)
    assert schema is not None, f"{listed.name} answers text: there is no outputSchema to check"
    return Draft202012Validator(schema)


@cache
def _validator(tool: Tool) -> Draft202012Validator:
    return Draft202012Validator(output_schema(tool))


@cache
def _action_validator(tool: Tool, action: Action) -> Draft202012Validator:
    models = models_of(action)
    schema = output_schema(tool)
    branches = [b for model, b in zip(result_models(tool), schema["oneOf"], strict=True) if model in models]
    return Draft202012Validator({"anyOf": branches, "$defs": schema.get("$defs", {})})
