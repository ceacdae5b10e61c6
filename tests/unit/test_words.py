"""Masaro's words on /mcp/masaro: one table of changes per result model, applied to the answer and to its schema."""

import pytest
from jsonschema import Draft202012Validator

from agent_workspace.mcp_server.surfaces import MASARO
from agent_workspace.mcp_server.tool_schemas import flat_output_schema, result_schema
from agent_workspace.mcp_server.words import MASARO_WORDS
from agent_workspace.tools import REGISTRY

GET_TASK = MASARO.listed_tool("get_task")
SHOW = REGISTRY.tool("task").action("show")


def a_task(**fields) -> dict:
    """What `task show` answers, as little of it as the model requires."""
    at = "2026-01-01T00:00:00.000Z"
    return {
        "id": "0kGpezGeuxt",
        "title": "t",
        "body": "the text",
        "status": "ongoing",
        "assignee": "agent",
        "createdBy": "agent",
        "createdAt": at,
        "updatedAt": at,
        "attachments": [],
        "column": "in_progress",
        "description": "the text",
        **fields,
    }


def presented(answer: dict) -> dict:
    shown = MASARO_WORDS.present(answer, result_schema(SHOW))
    problems = [e.message for e in Draft202012Validator(flat_output_schema(GET_TASK, SHOW)).iter_errors(shown)]
    assert not problems, problems
    return shown


def test_a_task_s_status_is_its_column_and_its_text_its_description_in_the_place_of_the_first():
    shown = presented(a_task())
    assert list(shown)[:4] == ["id", "title", "description", "status"]
    assert (shown["status"], shown["description"]) == ("in_progress", "the text")
    assert not {"body", "column"} & set(shown)


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ({"what": "claimed", "status": "ongoing"}, "in_progress"),
        ({"what": "completed", "status": "completed", "column": "in_review"}, "in_review"),
        ({"what": "accepted", "column": "backlog"}, "backlog"),
        ({"what": "released", "status": "notstarted"}, "ready"),
        ({"what": "progress", "text": "tests written"}, None),
    ],
    ids=["agentrq-status-alone", "both", "column-alone", "notstarted", "neither"],
)
def test_a_feed_line_shows_its_column_or_else_the_one_its_agentrq_status_lands_in(line, status):
    entry = {"id": "0kGpezGeuxu", "at": "2026-01-01T00:00:00.000Z", "by": "agent", **line}
    shown = presented(a_task(activity=[entry], comments=[]))["activity"][0]
    assert shown.get("status") == status and "column" not in shown


def test_only_the_models_change_never_what_a_trigger_carries():
    trigger = {"event": "deploy", "payload": {"body": "b", "column": "c", "status": "ongoing"}}
    assert presented(a_task(trigger=trigger))["trigger"] == trigger


def test_what_an_answer_leaves_out_stays_out_and_null_stays_null():
    shown = presented(a_task(claim=None))
    assert shown["claim"] is None and "activity" not in shown and "unblocked" not in shown


def test_every_model_the_words_change_is_in_the_answer_of_some_masaro_tool():
    """The words name models by their names under `$defs`: a renamed model would be silently left as it was."""
    answered = set()
    for listed in MASARO.listed:
        tool = REGISTRY.tool(listed.target[0])
        schema = result_schema(tool.action(listed.target[1]))
        answered |= set(schema["$defs"]) if schema else set()
    assert set(MASARO_WORDS.changes) <= answered
