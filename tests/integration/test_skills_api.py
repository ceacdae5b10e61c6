"""The human side of skills: reading them and sharing them over REST, against uvicorn, and what agents then see."""

import httpx
import pytest

from agent_workspace.local.stack import seed
from agent_workspace.services import accounts
from agent_workspace.store import keys
from tests.integration.test_skills_mcp import partition, skill_md
from tests.support import assert_problem, call

pytestmark = pytest.mark.anyio

RELEASE_MD = "skill://release-notes/SKILL.md"


class Api:
    """The skills routes of the account's workspaces, as one human."""

    def __init__(self, live, token: str) -> None:
        self.base = f"{live.url}/api/workspaces"
        self.headers = {"authorization": f"Bearer {token}"}

    def listing(self, workspace_id: str) -> httpx.Response:
        return httpx.get(f"{self.base}/{workspace_id}/skills", headers=self.headers)

    def skill(self, workspace_id: str, name: str) -> httpx.Response:
        return httpx.get(f"{self.base}/{workspace_id}/skills/{name}", headers=self.headers)

    def file(self, workspace_id: str, name: str, path: str) -> httpx.Response:
        return httpx.get(f"{self.base}/{workspace_id}/skills/{name}/files/{path}", headers=self.headers)

    def share(self, workspace_id: str, name: str, target: str, **extra) -> httpx.Response:
        body = {"workspaceId": target, **extra}
        return httpx.post(f"{self.base}/{workspace_id}/skills/{name}/shares", json=body, headers=self.headers)

    def unshare(self, workspace_id: str, name: str, target: str) -> httpx.Response:
        return httpx.delete(f"{self.base}/{workspace_id}/skills/{name}/shares/{target}", headers=self.headers)


@pytest.fixture
def api(live, seeded) -> Api:
    return Api(live, seeded.human_token)


async def agent_call(runtime, token: str, action: str, **payload) -> str:
    outcome = await call(runtime, token, "skills", {"action": action, "payload": payload})
    assert not outcome.is_error, outcome.text
    return outcome.text


@pytest.fixture
async def release_notes(runtime, seeded) -> None:
    """The seeded workspace's agent wrote a skill with two more files."""
    await agent_call(runtime, seeded.agent_token, "save", uri=RELEASE_MD, content=skill_md("Write release notes."))
    await agent_call(runtime, seeded.agent_token, "save", uri="skill://release-notes/templates/entry.md", content="e")
    await agent_call(runtime, seeded.agent_token, "save", uri="skill://release-notes/checklist.md", content="c")


def other_workspace(runtime, seeded, title: str = "Other"):
    workspace, issued = accounts.create_workspace(runtime.accounts, seeded.account_id, title, "")
    return workspace.id, issued.token


# -- reading ---------------------------------------------------------------------------------------


async def test_the_human_lists_a_workspaces_skills_with_descriptions_and_owner(api, seeded, release_notes):
    response = api.listing(seeded.workspace_id)
    assert response.status_code == 200, response.text
    assert response.json() == [
        {
            "name": "release-notes",
            "uri": RELEASE_MD,
            "description": "Write release notes.",
            "ownerWorkspaceId": seeded.workspace_id,
            "sharedIn": False,
        }
    ]


async def test_a_workspace_without_skills_lists_none(api, seeded):
    assert api.listing(seeded.workspace_id).json() == []


async def test_one_skill_shows_its_skill_md_files_and_shares(api, seeded, release_notes):
    response = api.skill(seeded.workspace_id, "release-notes")
    assert response.status_code == 200, response.text
    skill = response.json()
    assert {k: skill[k] for k in ("name", "uri", "description", "ownerWorkspaceId", "sharedIn", "sharedWith")} == {
        "name": "release-notes",
        "uri": RELEASE_MD,
        "description": "Write release notes.",
        "ownerWorkspaceId": seeded.workspace_id,
        "sharedIn": False,
        "sharedWith": [],
    }
    assert skill["content"] == skill_md("Write release notes.")
    assert skill["files"] == ["skill://release-notes/checklist.md", "skill://release-notes/templates/entry.md"]
    assert skill["createdAt"] <= skill["updatedAt"]


async def test_one_file_of_a_skill_including_nested_paths_and_skill_md(api, seeded, release_notes):
    nested = api.file(seeded.workspace_id, "release-notes", "templates/entry.md")
    assert nested.status_code == 200, nested.text
    assert {k: nested.json()[k] for k in ("uri", "path", "content")} == {
        "uri": "skill://release-notes/templates/entry.md",
        "path": "templates/entry.md",
        "content": "e",
    }
    own = api.file(seeded.workspace_id, "release-notes", "SKILL.md").json()
    assert (own["path"], own["content"]) == ("SKILL.md", skill_md("Write release notes."))


async def test_missing_skills_and_files_are_404_and_bad_names_422(api, seeded, release_notes):
    assert_problem(api.skill(seeded.workspace_id, "nope"), 404, "no skill nope")
    assert_problem(api.file(seeded.workspace_id, "release-notes", "missing.md"), 404, "nothing at")
    assert_problem(api.file(seeded.workspace_id, "nope", "SKILL.md"), 404, "nothing at")
    assert_problem(api.skill(seeded.workspace_id, "Bad_Name"), 422, "lowercase letters and digits")
    assert_problem(api.file(seeded.workspace_id, "release-notes", "bad name.md"), 422, "relative path")


async def test_another_accounts_human_sees_no_skills(live, runtime, seeded, release_notes):
    stranger = Api(live, seed(runtime).human_token)
    assert_problem(stranger.listing(seeded.workspace_id), 404, f"no workspace {seeded.workspace_id}")
    assert_problem(stranger.skill(seeded.workspace_id, "release-notes"), 404)
    assert_problem(stranger.file(seeded.workspace_id, "release-notes", "SKILL.md"), 404)


# -- sharing ---------------------------------------------------------------------------------------


async def test_sharing_into_another_workspace_of_the_account_makes_it_visible_there_read_only(
    api, runtime, seeded, release_notes
):
    target, target_token = other_workspace(runtime, seeded)
    response = api.share(seeded.workspace_id, "release-notes", target)
    assert response.status_code == 201, response.text
    assert response.json() == {"name": "release-notes", "uri": RELEASE_MD, "workspaceId": target}
    again = api.share(seeded.workspace_id, "release-notes", target)
    assert (again.status_code, again.json()) == (200, response.json())

    assert api.listing(target).json() == [
        {
            "name": "release-notes",
            "uri": RELEASE_MD,
            "description": "Write release notes.",
            "ownerWorkspaceId": seeded.workspace_id,
            "sharedIn": True,
        }
    ]
    assert api.skill(seeded.workspace_id, "release-notes").json()["sharedWith"] == [target]
    shared = api.skill(target, "release-notes").json()
    assert (shared["sharedIn"], shared["content"]) == (True, skill_md("Write release notes."))
    assert api.file(target, "release-notes", "checklist.md").json()["content"] == "c"

    saving = {"action": "save", "payload": {"uri": RELEASE_MD, "content": skill_md()}}
    outcome = await call(runtime, target_token, "skills", saving)
    assert outcome.is_error and "read-only here" in outcome.text
    assert "readOnly" in await agent_call(runtime, target_token, "search", q="release")


async def test_sharing_stays_within_the_account(live, api, runtime, seeded, release_notes):
    foreign = seed(runtime)
    assert_problem(api.share(seeded.workspace_id, "release-notes", foreign.workspace_id), 404, "no workspace")
    assert_problem(api.share(seeded.workspace_id, "release-notes", "0000000none"), 404, "no workspace")
    assert await agent_call(runtime, foreign.agent_token, "search") == '{"skills": []}'
    stranger = Api(live, foreign.human_token)
    assert_problem(stranger.share(seeded.workspace_id, "release-notes", foreign.workspace_id), 404)
    assert_problem(stranger.unshare(seeded.workspace_id, "release-notes", foreign.workspace_id), 404)


async def test_a_name_clash_in_the_target_is_409_and_changes_nothing(api, runtime, seeded, release_notes):
    target, target_token = other_workspace(runtime, seeded)
    await agent_call(runtime, target_token, "save", uri=RELEASE_MD, content=skill_md("Their own."))
    assert_problem(api.share(seeded.workspace_id, "release-notes", target), 409, "already has a skill named")
    assert api.skill(target, "release-notes").json()["description"] == "Their own."
    assert api.skill(seeded.workspace_id, "release-notes").json()["sharedWith"] == []


async def test_share_refusals(api, runtime, seeded, release_notes):
    target, _ = other_workspace(runtime, seeded)
    third, _ = other_workspace(runtime, seeded, "Third")
    assert_problem(api.share(seeded.workspace_id, "nope", target), 404, "no skill nope")
    assert_problem(api.share(seeded.workspace_id, "release-notes", seeded.workspace_id), 422, "workspaceId")
    assert_problem(api.share(seeded.workspace_id, "release-notes", target, extra=1), 422, "unknown field 'extra'")
    assert_problem(api.share(seeded.workspace_id, "Bad", target), 422, "lowercase letters")
    assert api.share(seeded.workspace_id, "release-notes", target).status_code == 201
    # Only the owner shares it on.
    assert_problem(api.share(target, "release-notes", third), 403, "only that workspace shares it")


async def test_unsharing_takes_it_out_of_the_target_only(api, runtime, seeded, release_notes):
    target, target_token = other_workspace(runtime, seeded)
    api.share(seeded.workspace_id, "release-notes", target)
    response = api.unshare(seeded.workspace_id, "release-notes", target)
    assert response.status_code == 204 and response.content == b""
    assert api.listing(target).json() == []
    assert (await agent_call(runtime, target_token, "load", uri="skill://release-notes")).startswith("nothing at")
    assert api.skill(seeded.workspace_id, "release-notes").json()["sharedWith"] == []
    assert api.listing(seeded.workspace_id).json()[0]["name"] == "release-notes"
    assert_problem(api.unshare(seeded.workspace_id, "release-notes", target), 404, "is not shared into")
    assert_problem(api.unshare(seeded.workspace_id, "release-notes", seeded.workspace_id), 404, "is not shared into")


async def test_unsharing_where_the_owner_already_deleted_it_deletes_the_skill(api, runtime, seeded, release_notes):
    target, _ = other_workspace(runtime, seeded)
    api.share(seeded.workspace_id, "release-notes", target)
    removed = await agent_call(runtime, seeded.agent_token, "delete", uri="skill://release-notes")
    assert "it stays in the 1 other workspace" in removed
    assert api.listing(seeded.workspace_id).json() == []
    assert api.listing(target).json()[0]["ownerWorkspaceId"] == seeded.workspace_id

    assert api.unshare(seeded.workspace_id, "release-notes", target).status_code == 204
    assert api.listing(target).json() == []
    assert partition(runtime, keys.skill_home_id(seeded.workspace_id, "release-notes")) == []


async def test_the_owner_deleting_a_shared_skill_leaves_it_in_the_target(api, runtime, seeded, release_notes):
    target, target_token = other_workspace(runtime, seeded)
    api.share(seeded.workspace_id, "release-notes", target)
    await agent_call(runtime, seeded.agent_token, "delete", uri="skill://release-notes")
    assert_problem(api.skill(seeded.workspace_id, "release-notes"), 404)
    assert api.skill(target, "release-notes").json()["files"] == [
        "skill://release-notes/checklist.md",
        "skill://release-notes/templates/entry.md",
    ]
    assert await agent_call(runtime, target_token, "delete", uri="skill://release-notes") == (
        "skill release-notes deleted: no other workspace used it"
    )
    assert partition(runtime, keys.skill_home_id(seeded.workspace_id, "release-notes")) == []


async def test_a_new_description_reaches_every_workspace_the_skill_is_shared_into(api, runtime, seeded, release_notes):
    targets = [other_workspace(runtime, seeded, f"T{n}")[0] for n in range(3)]
    for target in targets:
        assert api.share(seeded.workspace_id, "release-notes", target).status_code == 201
    await agent_call(runtime, seeded.agent_token, "save", uri=RELEASE_MD, content=skill_md("New words."))
    for workspace_id in (seeded.workspace_id, *targets):
        assert [s["description"] for s in api.listing(workspace_id).json()] == ["New words."]
