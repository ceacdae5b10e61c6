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
    assert context["projects"] == [{"id": project["id"], "title": "Billing"}]
    assert context["epics"] == [{"id": epic.json()["id"], "title": "Checkout v2"}]


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


async def test_the_human_edits_a_project_s_documents_and_the_agent_reads_them(api, agent):
    project = api.post("/projects", json={"title": "Billing"}).json()
    edited = api.patch(
        f"/projects/{project['id']}",
        json={"expectedRevision": 1, "conventions": "Money in cents.\n", "decisions": "- Stripe, 2026-11"},
    )
    assert edited.status_code == 200, edited.text
    assert (edited.json()["revision"], edited.json()["memory"]) == (2, "")
    text, is_error = await agent.raw("get_project_context", {"projectId": project["id"]})
    read = json.loads(text)
    assert not is_error and (read["conventions"], read["decisions"], read["title"]) == (
        "Money in cents.\n",
        "- Stripe, 2026-11",
        "Billing",
    )


def test_an_edit_from_a_stale_revision_is_a_409_and_keeps_what_won(api):
    project = api.post("/projects", json={"title": "Billing"}).json()
    assert api.patch(f"/projects/{project['id']}", json={"expectedRevision": 1, "memory": "first"}).status_code == 200
    stale = api.patch(f"/projects/{project['id']}", json={"expectedRevision": 1, "memory": "second"})
    assert_problem(stale, 409, "revision 2, not 1")
    assert api.get(f"/projects/{project['id']}").json()["memory"] == "first"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"expectedRevision": 1, "memory": "x" * (64 * 1024 + 1)}, "memory"),
        ({"expectedRevision": 1, "title": ""}, "title"),
        ({"memory": "no revision"}, "expectedRevision"),
        ({"expectedRevision": 1, "owner": "me"}, "owner"),
    ],
)
def test_a_bad_edit_is_refused_naming_the_field_and_the_project_is_unchanged(api, body, field):
    project = api.post("/projects", json={"title": "Billing"}).json()
    assert_problem(api.patch(f"/projects/{project['id']}", json=body), 422, field)
    after = api.get(f"/projects/{project['id']}").json()
    assert (after["revision"], after["memory"], after["title"]) == (1, "", "Billing")


async def test_the_human_edits_and_deletes_epics_and_projects_and_the_cap_frees_up(api, agent, monkeypatch):
    monkeypatch.setattr("agent_workspace.services.board.EPICS_MAX", 1)
    epic = api.post("/epics", json={"title": "Checkout v2", "description": "Old plan."}).json()
    project = api.post("/projects", json={"title": "Billing"}).json()
    assert api.post("/epics", json={"title": "one more"}).status_code == 409
    edited = api.patch(f"/epics/{epic['id']}", json={"description": "New plan."})
    assert edited.status_code == 200 and (edited.json()["title"], edited.json()["description"]) == (
        "Checkout v2",
        "New plan.",
    )
    assert api.patch(f"/epics/{epic['id']}", json={"title": "Checkout v3"}).json()["description"] == "New plan."
    assert api.get(f"/epics/{epic['id']}").json()["title"] == "Checkout v3"
    assert (await agent.raw("board", {"action": "epic", "payload": {"epicId": epic["id"]}}))[0].count("v3") == 1
    assert api.get("/board").json()["epics"] == [{"id": epic["id"], "title": "Checkout v3"}]
    assert_problem(api.patch(f"/epics/{epic['id']}", json={"title": "two\nlines"}), 422, "title")

    assert api.delete(f"/epics/{epic['id']}").status_code == 204
    assert api.delete(f"/projects/{project['id']}").status_code == 204
    assert_problem(api.delete(f"/epics/{epic['id']}"), 404, "no epic")
    assert_problem(api.get(f"/projects/{project['id']}"), 404, "no project")
    assert (api.get("/board").json()["epics"], api.get("/board").json()["projects"]) == ([], [])
    text, is_error = await agent.raw("create_task", {"title": "t", "epicId": epic["id"]})
    assert is_error and "epicId" in text, text
    assert api.post("/epics", json={"title": "room again"}).status_code == 201, "a delete frees its place"


@pytest.mark.parametrize("epic_id", ["0kGpezGeuxt", "x" * 2000, "a.b"])
def test_an_unknown_epic_is_a_404_naming_it(api, epic_id):
    for method, body in (("GET", None), ("PATCH", {"title": "t"}), ("DELETE", None)):
        assert_problem(api.request(method, f"/epics/{epic_id}", json=body), 404, "no epic")
