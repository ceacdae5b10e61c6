"""The `board` tool's workspace level through the SDK's MCP client, by our actions and by Masaro's tool names.

Masaro's reference: get_workspace_context ("the workspace at a glance: statuses, labels, complexity
vocabulary, your projects, and the active cycle"), get_project_context ("its memory, conventions, and
decisions"), create_project and create_epic ({title, description?}), each on the connection's one workspace.
"""

import re
from pathlib import Path

import pytest

from agent_workspace.domain.board import EPICS_MAX, PROJECTS_MAX
from agent_workspace.domain.columns import COLUMNS, COMPLEXITY, PRIORITIES
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import STATUSES
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import accounts, board
from tests.support import connected, ok

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("call", [("board", "context"), ("get_workspace_context", None)], ids=["ours", "masaro"])
async def test_the_context_shows_statuses_columns_vocabularies_and_the_default_policy(agent, seeded, call):
    context = await ok(agent, *call)
    assert context["workspace"]["id"] == seeded.workspace_id
    assert context["statuses"] == list(STATUSES)
    assert [(c["column"], c["status"]) for c in context["columns"]] == [(name, status) for name, status, _ in COLUMNS]
    assert {c["status"] for c in context["columns"]} == set(STATUSES), "every column refines an AgentRQ status"
    assert context["complexity"] == list(COMPLEXITY) and context["priorities"] == list(PRIORITIES)
    assert context["linkTypes"] == ["blocks", "relates_to", "duplicate_of"]
    assert context["policy"] == {"supervised": False, "signOff": False}, "AgentRQ's behaviour by default"
    assert (context["projects"], context["epics"], context["labels"], context["activeCycle"]) == ([], [], [], None)


async def test_projects_and_epics_made_by_either_name_are_in_the_context_oldest_first(agent):
    billing = await ok(agent, "board", "createProject", title="Billing", description="Invoices and refunds.")
    search = await ok(agent, "create_project", title="Search")
    epic = await ok(agent, "create_epic", title="Checkout v2", description="Move to the new API.")
    other = await ok(agent, "board", "createEpic", title="Onboarding")

    assert billing == {"id": billing["id"], "title": "Billing", "description": "Invoices and refunds."}
    assert search["description"] == ""
    context = await ok(agent, "get_workspace_context")
    assert context["projects"] == [{"id": billing["id"], "title": "Billing"}, {"id": search["id"], "title": "Search"}]
    assert context["epics"] == [{"id": epic["id"], "title": "Checkout v2"}, {"id": other["id"], "title": "Onboarding"}]
    assert (await ok(agent, "board", "epic", epicId=epic["id"]))["description"] == "Move to the new API."
    assert (await ok(agent, "board", "project", projectId=billing["id"]))["description"] == "Invoices and refunds."


@pytest.mark.parametrize("call", [("board", "project"), ("get_project_context", None)], ids=["ours", "masaro"])
async def test_project_context_has_its_memory_conventions_and_decisions(agent, call):
    made = await ok(agent, "create_project", title="Billing", description="Invoices.")
    project = await ok(agent, *call, projectId=made["id"])
    assert {k: project[k] for k in ("id", "title", "description", "memory", "conventions", "decisions")} == {
        "id": made["id"],
        "title": "Billing",
        "description": "Invoices.",
        "memory": "",
        "conventions": "",
        "decisions": "",
    }
    assert project["revision"] == 1 and project["createdAt"] == project["updatedAt"]


@pytest.mark.parametrize("project_id", ["0kGpezGeuxt", "x" * 2000, "../etc"])
async def test_an_unknown_project_is_not_found_naming_it(agent, project_id):
    text, is_error = await agent.raw("get_project_context", {"projectId": project_id})
    assert is_error and text.startswith("get_project_context: no project ") and "in this workspace" in text


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, "title"),
        ({"title": ""}, "title"),
        ({"title": "two\nlines"}, "title"),
        ({"title": "x" * (TITLE_MAX + 1)}, "title"),
        ({"title": "ok", "description": 5}, "description"),
        ({"title": "ok", "owner": "me"}, "owner"),
    ],
)
async def test_bad_input_is_refused_naming_the_tool_as_called_and_the_field_and_nothing_is_made(
    agent, arguments, field
):
    for name in ("create_project", "create_epic"):
        text, is_error = await agent.raw(name, arguments)
        assert is_error and text.startswith(f"{name}: ") and field in text, text
    context = await ok(agent, "get_workspace_context")
    assert (context["projects"], context["epics"]) == ([], [])


async def test_another_workspace_sees_none_of_this_board(agent, live, runtime, seeded):
    made = await ok(agent, "create_project", title="Billing")
    await ok(agent, "create_epic", title="Checkout v2")
    _, token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "Another team.")
    async with connected(live.url, token.token) as other:
        context = await ok(other, "get_workspace_context")
        assert (context["projects"], context["epics"]) == ([], [])
        text, is_error = await other.raw("get_project_context", {"projectId": made["id"]})
        assert is_error and "no project" in text


async def test_the_epic_cap_holds_and_its_refusal_says_so(agent, runtime, seeded, monkeypatch):
    monkeypatch.setattr("agent_workspace.services.board.EPICS_MAX", 2)
    for n in range(2):
        await ok(agent, "create_epic", title=f"epic {n}")
    text, is_error = await agent.raw("create_epic", {"title": "one more"})
    assert is_error and text == "create_epic: this workspace has 2 epics already, the most it may hold"
    assert len((await ok(agent, "get_workspace_context"))["epics"]) == 2
    assert EPICS_MAX == 200


def test_the_columns_table_in_the_docs_is_the_one_the_context_returns():
    docs = (Path(__file__).parents[2] / "docs" / "tools.md").read_text()
    docs = docs[docs.index("## The board") : docs.index("## The agent repo")]
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| (.+?) \|$", docs, flags=re.MULTILINE)
    assert rows == [(name, status, meaning) for name, status, meaning in COLUMNS]


async def test_the_largest_board_still_answers_and_lists_projects_and_epics_by_id_and_title(agent, runtime, seeded):
    """Agents may fill the caps with the longest titles and descriptions there are: the context and the human's
    board view still answer, in one read of the board, and a task write still names any of them."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    title, description = "\U0001f4a5" * TITLE_MAX, "d" * BODY_MAX
    for _ in range(PROJECTS_MAX):
        board.create_project(runtime, actor, title, description)
    epics = [board.create_epic(runtime, actor, title, description) for _ in range(EPICS_MAX)]
    context = await ok(agent, "get_workspace_context")
    assert (len(context["projects"]), len(context["epics"])) == (PROJECTS_MAX, EPICS_MAX)
    assert context["epics"][-1] == {"id": epics[-1].id, "title": title}
    made = await ok(agent, "create_task", title="in the last epic", epicId=epics[-1].id)
    assert made["epicId"] == epics[-1].id
    assert (await ok(agent, "board", "epic", epicId=epics[-1].id))["description"] == description
