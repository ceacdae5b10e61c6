"""Typed results through the SDK's own client: output schemas in tools/list, structuredContent beside the same text.

The SDK client checks every successful `tools/call` against the tool's listed outputSchema itself (and raises
when it does not match); these tests also check it here with jsonschema, so a client that does not is covered.
"""

import json

import pytest
from jsonschema import Draft202012Validator

from tests.support import CREATED, TOOL_NAMES, mcp_client, text_of

MODES = ["legacy", "2026-07-28"]


async def _listed(client) -> dict:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


def _valid(tool, structured: dict) -> None:
    errors = list(Draft202012Validator(tool.output_schema).iter_errors(structured))
    assert not errors, errors[0].message


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_but_help_lists_an_output_schema_that_is_a_oneof_of_closed_objects(live, seeded, mode):
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        tools = await _listed(client)

    assert list(tools) == TOOL_NAMES
    assert tools["help"].output_schema is None
    for name in TOOL_NAMES[:-1]:
        schema = tools[name].output_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["oneOf"], name
        for branch in schema["oneOf"]:
            model = schema["$defs"][branch["$ref"].rsplit("/", 1)[1]]
            assert model["additionalProperties"] is False, (name, branch)
            assert branch["description"].startswith("The answer of "), branch


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_a_json_answer_is_the_same_object_in_structured_content_and_in_the_text(live, seeded, mode):
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        tools = await _listed(client)
        result = await client.call_tool("workspace", {"action": "get"})

    assert result.is_error is False
    assert result.structured_content["id"] == seeded.workspace_id
    assert text_of(result) == json.dumps(result.structured_content, ensure_ascii=False)  # the text is unchanged
    _valid(tools["workspace"], result.structured_content)


@pytest.mark.anyio
async def test_a_text_answer_keeps_its_text_and_carries_it_as_structured_text(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        tools = await _listed(client)
        created = await client.call_tool(
            "task", {"action": "create", "payload": {"title": "T", "body": "B", "assignee": "human"}}
        )
        empty = await client.call_tool("task", {"action": "get"})  # the only task is the human's: nothing to dequeue
        published = await client.call_tool(
            "workspace", {"action": "publishEvent", "payload": {"name": "deploy_done", "payload": "v2 is live"}}
        )

    assert CREATED.match(text_of(created))
    assert created.structured_content == {"text": text_of(created)}
    assert text_of(empty) == "null" and empty.structured_content == {"text": "null"}
    assert text_of(published) == 'event "deploy_done" published'
    for tool, result in (("task", created), ("task", empty), ("workspace", published)):
        _valid(tools[tool], result.structured_content)


@pytest.mark.anyio
async def test_an_error_carries_no_structured_content(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        result = await client.call_tool("task", {"action": "get", "payload": {"taskId": 5}})

    assert result.is_error is True
    assert result.structured_content is None
    assert text_of(result) == "task get: field 'taskId' must be a string"


@pytest.mark.anyio
async def test_a_memory_answers_json_or_text_and_both_match_the_schema(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        tools = await _listed(client)
        await client.call_tool("memory", {"action": "save", "payload": {"name": "deploys.md", "content": "# Deploys"}})
        answers = [
            await client.call_tool("memory", {"action": "load", "payload": {"name": "deploys.md"}}),
            await client.call_tool("memory", {"action": "load"}),
        ]

    for result in answers:
        assert result.is_error is False, text_of(result)
        _valid(tools["memory"], result.structured_content)
        structured = result.structured_content
        assert text_of(result) in (json.dumps(structured, ensure_ascii=False), structured.get("text"))


@pytest.mark.anyio
async def test_the_input_schema_shows_each_actions_payload_fields(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        tools = await _listed(client)

    task = tools["task"].input_schema
    assert task["required"] == ["action"]
    branches = {branch["title"]: branch for branch in task["properties"]["payload"]["anyOf"]}
    assert branches["create"]["required"] == ["title", "body"]
    assert branches["create"]["properties"]["assignee"]["enum"] == ["human", "agent"]
    assert branches["updateStatus"]["properties"]["status"]["enum"] == [
        "ongoing",
        "completed",
        "blocked",
        "rejected",
        "notstarted",
    ]
    Draft202012Validator.check_schema(task)
    # A call filled from the schema alone is valid against it, and the server takes it.
    Draft202012Validator(task).validate({"action": "updateStatus", "payload": {"taskId": "x", "status": "ongoing"}})


@pytest.mark.anyio
async def test_annotations_say_what_each_tool_may_do(live, seeded):
    async with mcp_client(live.url, seeded.agent_token) as client:
        tools = await _listed(client)

    hints = {name: tool.annotations for name, tool in tools.items()}
    assert all(h.title and h.title == tools[n].title for n, h in hints.items())
    assert hints["help"].read_only_hint is True and hints["help"].idempotent_hint is True
    assert hints["siteTools"].open_world_hint is True  # its calls run on the person's websites
    assert all(h.open_world_hint is False for n, h in hints.items() if n != "siteTools")
    assert hints["memory"].destructive_hint is True  # memory delete
    assert hints["workspace"].destructive_hint is False
    assert all(h.read_only_hint is False for n, h in hints.items() if n != "help")  # each has an action that writes
