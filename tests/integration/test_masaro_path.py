"""/mcp/masaro through the SDK's MCP client: Masaro's 19 tools by their names, answering in Masaro's words.

The reference (../shared/reference/masaro-mcp-tools.txt) lists get_workspace_context ... fetch in four groups; a
connected agent sees exactly those, each with its own description, flat arguments, outputSchema and hints, and reads
a task's status as its board column and its text as `description`. /mcp answers the same calls as it always did.
"""

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_workspace.domain.columns import COLUMN_NAMES
from agent_workspace.domain.tasks import STATUSES
from agent_workspace.services import board
from tests.support import mcp_client, text_of

pytestmark = pytest.mark.anyio

# The reference's tools in its order: context, work, authoring, company knowledge.
MASARO_TOOLS = [
    "get_workspace_context",
    "get_project_context",
    "list_tasks",
    "get_task",
    "get_next_task",
    "claim_task",
    "update_progress",
    "complete_task",
    "report_blocker",
    "release_task",
    "create_task",
    "update_task",
    "archive_task",
    "create_project",
    "create_epic",
    "link_tasks",
    "add_comment",
    "search",
    "fetch",
]
READS = {"get_workspace_context", "get_project_context", "list_tasks", "get_task", "get_next_task", "search", "fetch"}


class Masaro:
    """An agent on one MCP path; every answer it takes is checked against the outputSchema its tool lists there."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.listed: dict[str, Any] = {}
        self.called: set[str] = set()

    async def tools(self) -> dict[str, Any]:
        if not self.listed:
            self.listed = {tool.name: tool for tool in (await self.client.list_tools()).tools}
        return self.listed

    async def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, text_of(result)
        answer = result.structured_content
        tool = (await self.tools()).get(name)  # on /mcp, Masaro's names answer unlisted
        if tool is not None:
            problems = [e.message for e in Draft202012Validator(tool.output_schema).iter_errors(answer)]
            assert not problems, (name, problems, answer)
        assert json.loads(text_of(result)) == answer, "the text is the structured answer"
        self.called.add(name)
        return answer

    async def refused(self, name: str, **arguments: Any) -> str:
        result = await self.client.call_tool(name, arguments)
        assert result.is_error, text_of(result)
        return text_of(result)


@pytest.fixture
async def masaro(live, seeded):
    async with mcp_client(live.url, seeded.agent_token, path="/mcp/masaro") as client:
        yield Masaro(client)


@pytest.fixture
async def ours(live, seeded):
    """The same agent on /mcp, where the tools are the nine action tools (and Masaro's names answer unlisted)."""
    async with mcp_client(live.url, seeded.agent_token) as client:
        yield Masaro(client)


def keys_of(value: Any) -> set[str]:
    """Every object key anywhere in `value`."""
    if isinstance(value, dict):
        return set(value).union(*(keys_of(item) for item in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_of(item) for item in value))
    return set()


async def test_the_path_lists_exactly_masaro_s_tools_each_described_with_flat_arguments_and_honest_hints(masaro):
    tools = await masaro.tools()
    assert list(tools) == MASARO_TOOLS
    for name, tool in tools.items():
        assert tool.description and tool.input_schema["type"] == "object", name
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        hints = tool.annotations
        assert hints.read_only_hint is (name in READS), name
        assert hints.destructive_hint is (name == "archive_task"), name
        assert hints.open_world_hint is False, name
    assert tools["archive_task"].input_schema["required"] == ["taskId", "reason"], "Requires a reason."
    assert tools["create_task"].input_schema["required"] == ["title"]
    assert {"title", "summary", "description", "criteria", "parentId", "projectId"} <= set(
        tools["create_task"].input_schema["properties"]
    )
    assert tools["list_tasks"].input_schema["properties"]["status"]["enum"] == [*COLUMN_NAMES, None]
    assert "background" not in tools["claim_task"].description, "nothing drafts a summary here"


async def test_no_output_schema_on_the_path_speaks_of_a_body_a_column_or_an_agentrq_status(masaro):
    for name, tool in (await masaro.tools()).items():
        listed = json.dumps(tool.output_schema)
        assert not {"body", "column", "history", "conversation"} & keys_of(tool.output_schema), name
        assert not [word for word in set(STATUSES) - set(COLUMN_NAMES) if f'"{word}"' in listed], name


async def test_claim_progress_complete_by_masaro_s_names_shows_the_status_as_the_column(masaro, runtime, seeded):
    board.set_policy(runtime, seeded.workspace_id, None, True)  # Masaro's own: a delivery waits in review
    made = await masaro.ok(
        "create_task", title="Refund endpoint", description="POST /refunds", criteria=["returns 201"]
    )
    assert (made["status"], made["description"]) == ("ready", "POST /refunds")
    assert not {"body", "column"} & set(made)

    offered = await masaro.ok("get_next_task")
    assert (offered["task"]["id"], offered["task"]["status"]) == (made["id"], "ready")
    claimed = await masaro.ok("claim_task", taskId=made["identifier"])
    assert (claimed["status"], claimed["prepQueued"]) == ("in_progress", False)
    beat = await masaro.ok("update_progress", taskId=made["id"], message="Core implementation done")
    assert beat["recorded"] is True
    delivered = await masaro.ok(
        "complete_task", taskId=made["id"], summary="Refunds ship.", criteria=[{"index": 0, "met": True}]
    )
    assert (delivered["status"], delivered["description"]) == ("in_review", "POST /refunds")
    assert delivered["unblocked"] == []

    shown = await masaro.ok("get_task", taskId=made["id"])
    assert (shown["status"], shown["description"]) == ("in_review", "POST /refunds")
    assert not {"body", "column"} & keys_of(shown)
    changes = [(line["what"], line.get("status")) for line in shown["activity"] if "status" in line]
    assert changes == [("completed", "in_review"), ("claimed", "in_progress"), ("created", "ready")], changes
    listed = await masaro.ok("list_tasks", status="in_review")
    assert [(task["id"], task["status"]) for task in listed["tasks"]] == [(made["id"], "in_review")]
    fetched = await masaro.ok("fetch", id=made["identifier"])
    assert fetched["metadata"]["status"] == "in_review" and "column" not in fetched["metadata"]


async def test_every_masaro_tool_answers_what_its_output_schema_lists(masaro, runtime, seeded):
    context = await masaro.ok("get_workspace_context")
    assert context["statuses"] == list(COLUMN_NAMES)
    assert [column["status"] for column in context["columns"]] == list(COLUMN_NAMES)
    assert all(set(column) == {"status", "meaning"} for column in context["columns"])
    project = await masaro.ok("create_project", title="Billing")
    assert (await masaro.ok("get_project_context", projectId=project["id"]))["title"] == "Billing"
    epic = await masaro.ok("create_epic", title="Refunds")
    first = await masaro.ok("create_task", title="schema", projectId=project["id"], epicId=epic["id"])
    second = await masaro.ok("create_task", title="endpoint", criteria=["201"])
    linked = await masaro.ok("link_tasks", taskId=first["id"], type="relates_to", otherTaskId=second["id"])
    assert linked["created"] is True
    await masaro.ok("add_comment", taskId=second["id"], text="waits on the schema")
    moved = await masaro.ok("update_task", taskId=second["id"], status="backlog", priority="high")
    assert moved["status"] == "backlog"
    await masaro.ok("claim_task", taskId=first["id"])
    blocked = await masaro.ok("report_blocker", taskId=first["id"], questions=["Which currency?"])
    assert (blocked["status"], blocked["questions"]) == ("blocked", ["Which currency?"])
    assert (await masaro.ok("release_task", taskId=first["id"]))["status"] == "ready"
    archived = await masaro.ok("archive_task", taskId=first["id"], reason="Duplicate")
    assert archived["archived"]["reason"] == "Duplicate" and archived["status"] == "ready"
    assert (await masaro.ok("search", query="endpoint"))["results"][0]["id"] == second["id"]
    assert [task["id"] for task in (await masaro.ok("list_tasks"))["tasks"]] == [second["id"]], "archived: hidden"
    assert (await masaro.ok("get_task", taskId=second["id"]))["status"] == "backlog"
    assert (await masaro.ok("fetch", id=second["id"]))["metadata"]["status"] == "backlog"
    assert (await masaro.ok("get_next_task"))["task"]["id"] == second["id"], "in the backlog with criteria"
    await masaro.ok("claim_task", taskId=second["id"])
    await masaro.ok("update_progress", taskId=second["id"], message="endpoint written")
    assert (await masaro.ok("complete_task", taskId=second["id"], summary="shipped"))["status"] == "done"
    assert masaro.called == set(MASARO_TOOLS)


async def test_a_claim_of_a_task_with_neither_summary_nor_criteria_points_at_masaro_s_own_tools(masaro):
    bare = await masaro.ok("create_task", title="bare")
    claimed = await masaro.ok("claim_task", taskId=bare["id"])
    assert claimed["prepQueued"] is True
    assert "update_task" in claimed["next"] and "suggest" not in claimed["next"], claimed["next"]


async def test_a_bad_argument_is_refused_naming_the_tool_as_called_and_nothing_is_made(masaro):
    assert await masaro.refused("create_task", title=5) == "create_task: field 'title' must be a string"
    text = await masaro.refused("create_task", title="t", body="AgentRQ's word")
    assert text.startswith("create_task: unknown field 'body'"), text
    assert (await masaro.ok("list_tasks"))["tasks"] == []
    assert (await masaro.refused("task", action="list")).startswith("unknown tool 'task'; tools: get_workspace_context")


async def test_mcp_answers_the_same_calls_as_before_with_body_status_and_column(masaro, ours):
    made = await ours.ok("create_task", title="t", description="the text", criteria=["c"])
    assert (made["body"], made["status"], made["column"]) == ("the text", "notstarted", "ready")
    await ours.ok("task", action="claim", payload={"taskId": made["id"]})
    for shown in (
        await ours.ok("get_task", taskId=made["id"]),
        await ours.ok("task", action="show", payload={"taskId": made["id"]}),
    ):
        assert (shown["body"], shown["status"], shown["column"]) == ("the text", "ongoing", "in_progress")
        assert shown["activity"][0]["status"] == "ongoing" and "column" not in shown["activity"][0]
    assert (await ours.ok("fetch", id=made["id"]))["metadata"]["status"] == "ongoing"
    context = await ours.ok("board", action="context")
    assert context["statuses"] == list(STATUSES) and "column" in context["columns"][0]

    presented = await masaro.ok("get_task", taskId=made["id"])
    assert (presented["description"], presented["status"]) == (shown["body"], shown["column"])
    assert set(presented) == set(shown) - {"body", "column"}
