"""Strict decoding, old tool names, flat calls and error texts, on a registry built for the test."""

import json
from types import SimpleNamespace
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.config import Settings
from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.models import Principal
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.mcp_server.legacy import AGENTRQ_NAMES, OLD_TOOL_NAMES
from agent_workspace.tool_registry import Action, Call, NoPayload, Payload, Registry, Tool

pytestmark = pytest.mark.anyio


class Attachment(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    filename: str


class CreatePayload(Payload):
    title: str = Field(description="Short title")
    body: str = Field(description="Details")
    assignee: Literal["human", "agent"] = Field("agent", description="Who does it")
    priority: int = Field(0, description="Higher first")
    urgent: bool = Field(False, description="Flag")
    attachments: list[Attachment] = Field(default_factory=list, description="Files")


class ReplyPayload(Payload):
    taskId: str = Field(description="The task")
    text: str = Field(description="Message")


def _echo(call: Call, payload: Payload) -> dict:
    return payload.model_dump()


def _conflict(call: Call, payload: NoPayload) -> None:
    raise Conflict("someone else changed it")


def _crash(call: Call, payload: Payload) -> None:
    raise RuntimeError("secret internals at /var/task/x.py line 3")


REGISTRY = Registry(
    tools=(
        Tool(
            name="task",
            summary="Tasks.",
            actions=(
                Action("create", "Create a task.", CreatePayload, _echo),
                Action("reply", "Reply.", ReplyPayload, _echo),
                Action("get", "Get.", NoPayload, _conflict),
                Action("updateStatus", "Crash.", ReplyPayload, _crash),
            ),
        ),
    )
)
# These actions answer their payloads, which no result model declares: answers are not checked here.
UNCHECKED = SimpleNamespace(settings=Settings(check_answers=False))
CALL = Call(Principal(TokenKind.AGENT, "acc", "tok", "ws"), runtime=UNCHECKED, request_id="req-42")  # type: ignore[arg-type]


async def run(name: str, arguments: dict | None):
    return await dispatch(REGISTRY, CALL, name, arguments)


async def test_valid_payload_reaches_the_handler_with_defaults():
    outcome = await run("task", {"action": "create", "payload": {"title": "T", "body": "B"}})
    assert not outcome.is_error
    assert '"assignee": "agent"' in outcome.text and '"title": "T"' in outcome.text


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"title": "T", "body": "B", "verbose": True}, "task create: unknown field 'verbose'"),
        ({"title": "T", "body": "B", "titel": "x"}, "task create: unknown field 'titel' (did you mean 'title'?)"),
        ({"title": "T"}, "task create: missing required field 'body'"),
        ({"title": 5, "body": "B"}, "task create: field 'title' must be a string"),
        ({"title": "T", "body": "B", "priority": "1"}, "task create: field 'priority' must be an integer"),
        ({"title": "T", "body": "B", "urgent": "yes"}, "task create: field 'urgent' must be a boolean"),
        ({"title": "T", "body": "B", "attachments": {}}, "task create: field 'attachments' must be an array"),
        (
            {"title": "T", "body": "B", "attachments": [{"filename": 3}]},
            "task create: field 'attachments[0].filename' must be a string",
        ),
        ({"title": "T", "body": "B", "assignee": "robot"}, "task create: field 'assignee' must be 'human' or 'agent'"),
    ],
)
async def test_bad_payloads_are_refused_naming_tool_action_and_field(payload, expected):
    outcome = await run("task", {"action": "create", "payload": payload})
    assert outcome.is_error
    assert outcome.text == expected


async def test_several_problems_are_all_reported():
    outcome = await run("task", {"action": "create", "payload": {"verbose": 1}})
    assert outcome.is_error
    assert "missing required field 'title'" in outcome.text
    assert "missing required field 'body'" in outcome.text
    assert "unknown field 'verbose'" in outcome.text


async def test_a_payload_that_is_not_an_object_is_refused():
    outcome = await run("task", {"action": "create", "payload": "title=T"})
    assert (outcome.is_error, outcome.text) == (True, "task create: field 'payload' must be an object")


async def test_missing_unknown_and_non_string_actions_are_refused_with_the_choices():
    missing = await run("task", {"payload": {}})
    assert missing.is_error and missing.text.startswith("task: missing field 'action' (one of: create, reply, get")
    unknown = await run("task", {"action": "creat"})
    assert unknown.is_error
    assert unknown.text.startswith("task: unknown action 'creat' (did you mean 'create'?); actions: create, reply")
    wrong_type = await run("task", {"action": 7})
    assert wrong_type.is_error and wrong_type.text.startswith("task: field 'action' must be a string")


async def test_unknown_tool_is_refused_listing_the_tools():
    outcome = await run("tasks", {"action": "get"})
    assert (outcome.is_error, outcome.text) == (True, "unknown tool 'tasks'; tools: task, help")


async def test_flat_call_fields_move_into_the_payload():
    outcome = await run("task", {"action": "reply", "taskId": "0kGogHmaqvZ", "text": "done"})
    assert not outcome.is_error
    assert outcome.text == '{"taskId": "0kGogHmaqvZ", "text": "done"}'


async def test_flat_fields_merge_with_a_partial_payload_but_never_twice():
    merged = await run("task", {"action": "reply", "payload": {"taskId": "a"}, "text": "hi"})
    assert merged.text == '{"taskId": "a", "text": "hi"}'
    twice = await run("task", {"action": "reply", "payload": {"text": "a"}, "text": "b", "taskId": "t"})
    assert twice.is_error
    assert twice.text == "task reply: field 'text' is given both in payload and beside action; give it once"


async def test_old_tool_name_is_rewritten_with_its_arguments_as_payload_and_chat_id_renamed():
    outcome = await run("reply", {"chatId": "0kGogHmaqvZ", "text": "Tests pass"})
    assert not outcome.is_error
    assert outcome.text == '{"taskId": "0kGogHmaqvZ", "text": "Tests pass"}'


async def test_chat_id_is_accepted_by_the_new_reply_action_too():
    outcome = await run("task", {"action": "reply", "payload": {"chatId": "x", "text": "t"}})
    assert outcome.text == '{"taskId": "x", "text": "t"}'
    both = await run("task", {"action": "reply", "payload": {"chatId": "x", "taskId": "y", "text": "t"}})
    assert both.is_error and "'chatId' and 'taskId'" in both.text


async def test_old_tool_name_payload_is_decoded_as_strictly_as_the_new_one():
    outcome = await run("createTask", {"title": "T", "body": "B", "colour": "red"})
    assert (outcome.is_error, outcome.text) == (True, "task create: unknown field 'colour'")


async def test_old_name_whose_tool_is_not_served_yet_is_an_unknown_tool():
    outcome = await run("loadMemory", {})
    assert outcome.is_error and outcome.text.startswith("unknown tool 'loadMemory'")


def test_the_old_names_table_has_all_eighteen_agentrq_names_and_the_board_s():
    assert len(AGENTRQ_NAMES) == 18 and set(AGENTRQ_NAMES) <= set(OLD_TOOL_NAMES)
    assert OLD_TOOL_NAMES["get_workspace_context"] == ("board", "context")
    assert OLD_TOOL_NAMES["reply"] == ("task", "reply")
    assert OLD_TOOL_NAMES["getWorkspace"] == ("workspace", "get")


async def test_typed_domain_errors_become_tool_errors_naming_the_action():
    outcome = await run("task", {"action": "get"})
    assert (outcome.is_error, outcome.text) == (True, "task get: someone else changed it")


async def test_an_unexpected_exception_becomes_a_safe_tool_error_with_a_reference(logged):
    outcome = await run("task", {"action": "updateStatus", "payload": {"taskId": "t", "text": "PAYLOAD-SECRET"}})
    assert outcome.is_error
    assert outcome.text.startswith("task updateStatus: internal error")
    assert "req-42" in outcome.text
    assert "secret" not in outcome.text and "line 3" not in outcome.text
    record = json.loads(logged.getvalue().splitlines()[-1])
    assert (record["message"], record["tool"], record["action"]) == ("tool action failed", "task", "updateStatus")
    assert record["ref"] == "req-42", "the ref the agent reports finds its record"
    assert "PAYLOAD-SECRET" not in logged.getvalue()


async def test_a_tools_help_action_prints_its_actions_or_one_actions_payload():
    listing = await run("task", {"action": "help"})
    assert listing.text.splitlines()[0] == 'Usage: task {"action": "<action>", "payload": {...}}'
    one = await run("task", {"action": "help", "payload": {"topic": "create"}})
    usage = 'Usage: task {"action": "create", "payload": {"title": <string>, "body": <string>, ...}}'
    assert one.text.startswith(usage)
    bad = await run("task", {"action": "help", "payload": {"topic": "nope"}})
    assert bad.is_error and bad.text.startswith("task help: unknown topic 'nope'")


async def test_help_tool_answers_each_level_and_refuses_unknown_topics():
    overview = await run("help", {})
    assert "  task         Tasks.\n               actions: create, reply, get, updateStatus" in overview.text
    assert (await run("help", {"action": "task"})).text == (await run("task", {"action": "help"})).text
    action = await run("help", {"action": "task.create"})
    assert action.text == (await run("task", {"action": "help", "payload": {"topic": "create"}})).text
    assert (await run("help", {"action": "nope"})).is_error
    assert (await run("help", {"action": "task.nope"})).text.startswith("help: task has no action 'nope'")
    assert (await run("help", {"topic": "task"})).text == "help: unknown field 'topic'"
