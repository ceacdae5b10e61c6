"""The board's workspace level over REST, for the human: the context, the policy, projects and epics.

The policy is the human's alone (agents read it in their context); its defaults keep AgentRQ's behaviour.
"""

import json

import httpx
import pytest

from agent_workspace.services import accounts
from tests.support import assert_problem, bearer

pytestmark = pytest.mark.anyio


@pytest.fixture
def api(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


async def test_the_human_sets_the_policy_and_the_agent_s_context_shows_it(api, agent):
    assert api.get("/board").json()["policy"] == {"supervised": False, "signOff": False}
    assert api.put("/board/policy", json={"supervised": True}).json() == {"supervised": True, "signOff": False}
    assert api.put("/board/policy", json={"signOff": True}).json() == {"supervised": True, "signOff": True}
    text, is_error = await agent.raw("get_workspace_context", {})
    assert not is_error and json.loads(text)["policy"] == {"supervised": True, "signOff": True}


def test_a_policy_with_an_unknown_field_or_a_wrong_type_is_refused_and_nothing_changes(api):
    assert_problem(api.put("/board/policy", json={"supervised": "yes"}), 422, "supervised")
    assert_problem(api.put("/board/policy", json={"autopilot": True}), 422, "autopilot")
    assert api.get("/board").json()["policy"] == {"supervised": False, "signOff": False}


async def test_projects_and_epics_the_human_creates_are_the_agent_s_too(api, agent):
    created = api.post("/projects", json={"title": "Billing", "description": "Invoices."})
    assert created.status_code == 201
    project = created.json()
    epic = api.post("/epics", json={"title": "Checkout v2"})
    assert epic.status_code == 201 and epic.json()["title"] == "Checkout v2"
    assert api.get(f"/projects/{project['id']}").json()["conventions"] == ""
    text, _ = await agent.raw("get_workspace_context", {})
    context = json.loads(text)
    assert context["projects"] == [project] and [e["id"] for e in context["epics"]] == [epic.json()["id"]]


def test_bad_bodies_and_unknown_projects_are_problems_naming_the_field(api):
    assert_problem(api.post("/projects", json={"title": "two\nlines"}), 422, "title")
    assert_problem(api.post("/epics", json={}), 422, "title")
    assert_problem(api.get("/projects/0kGpezGeuxt"), 404, "no project")
    assert_problem(api.get("/projects/" + "x" * 2000), 404, "no project")
    assert api.get("/board").json()["projects"] == []


def test_another_account_s_human_gets_404_for_this_board(live, seeded, runtime):
    _, other = accounts.create_account(runtime.accounts, "Other")
    url = f"{live.url}/api/workspaces/{seeded.workspace_id}/board"
    assert_problem(httpx.get(url, headers=bearer(other.token)), 404, "no workspace")
    assert_problem(
        httpx.put(f"{url}/policy", json={"supervised": True}, headers=bearer(other.token)), 404, "no workspace"
    )
