"""The agent repo's first tools through the MCP client, by On My Radar's names and by our `agent` actions.

Reference: ../shared/reference/omr-agent-repo-tools.txt ("create_agent", "update_agent", "update_agent_prompt",
"list_agent_prompt_versions", "get_agent_prompt", "list_agents").
"""

import pytest

from agent_workspace.domain import agents as rules
from agent_workspace.services import accounts
from tests.support import connected, ok, refused

pytestmark = pytest.mark.anyio


# create_agent: "Required: name (1 to 80 characters). Optional: slug (... derived from the name when absent),
# description (up to 8,000), prompt (up to 128,000), primaryHarness ... You can have up to 100 agents."


@pytest.mark.parametrize("call", [("create_agent", None), ("agent", "create")], ids=["omr", "ours"])
async def test_create_derives_the_slug_and_a_prompt_is_version_1(agent, call):
    made = await ok(agent, *call, name="Release Captain", prompt="You run our releases.", primaryHarness="Codex-CLI")
    assert (made["slug"], made["promptVersion"], made["primaryTool"], made["role"]) == (
        "release-captain",
        1,
        "codex",
        "owner",
    )
    prompt = await ok(agent, "get_agent_prompt", agent="release-captain")
    assert (prompt["version"], prompt["status"], prompt["body"]) == (1, "live", "You run our releases.")
    listed = await ok(agent, "list_agents")
    assert [a["id"] for a in listed["agents"]] == [made["id"]]


async def test_create_limits_at_and_past_each_bound(agent):
    assert (await ok(agent, "create_agent", name="x" * 80, description="d" * 8_000, prompt="p" * 128_000))["name"]
    for arguments, field in (
        ({"name": "x" * 81}, "name"),
        ({"name": ""}, "name"),
        ({"name": "ok", "description": "d" * 8_001}, "description"),
        ({"name": "ok", "prompt": "p" * 128_001}, "prompt"),
        ({"name": "ok", "slug": "Not-Kebab"}, "slug"),
        ({"name": "ok", "primaryHarness": "emacs"}, "primaryHarness"),
    ):
        text = await refused(agent, "create_agent", arguments)
        assert text.startswith("create_agent: ") and field in text, text


async def test_a_slug_is_unique_in_the_account_and_the_cap_holds(agent, monkeypatch):
    await ok(agent, "create_agent", name="Reviewer")
    text = await refused(agent, "create_agent", {"name": "Reviewer"})
    assert "slug 'reviewer' is taken" in text
    monkeypatch.setattr(rules, "AGENTS_PER_ACCOUNT", 2)
    await ok(agent, "create_agent", name="Second")
    text = await refused(agent, "create_agent", {"name": "Third"})
    assert text == "create_agent: this account has 2 agents already, the most it may hold"


# update_agent_prompt: "If basedOn is not the live version the edit is refused, so two devices never overwrite each
# other ... An agent connection may write at most 20 prompt versions per agent per day."


async def test_prompt_versions_are_based_on_the_live_one_and_a_stale_write_gets_the_current_body(agent):
    made = await ok(agent, "create_agent", name="Writer")
    first = await ok(agent, "update_agent_prompt", agent=made["id"], body="v1", basedOn=0)
    assert first == {"agent": made["id"], "version": 1, "status": "live"}
    await ok(agent, "agent", "updatePrompt", agent="writer", body="v2", basedOn=1, note="tighter", harness="zed")
    text = await refused(agent, "update_agent_prompt", {"agent": made["id"], "body": "other", "basedOn": 1})
    assert "basedOn 1 is not the live version 2" in text and text.endswith("v2")
    versions = await ok(agent, "list_agent_prompt_versions", agent=made["id"])
    assert [(v["version"], v["status"]) for v in versions["versions"]] == [(2, "live"), (1, "superseded")]
    assert versions["versions"][0]["tool"] == "zed" and versions["versions"][0]["note"] == "tighter"
    assert all("body" not in v for v in versions["versions"])
    assert (await ok(agent, "get_agent_prompt", agent=made["id"], version=1))["body"] == "v1"
    text = await refused(agent, "update_agent_prompt", {"agent": made["id"], "body": " ", "basedOn": 2})
    assert "body must not be empty" in text


async def test_concurrent_prompt_writers_on_one_base_one_wins_nothing_lost(agent, live, runtime, seeded):
    import anyio

    made = await ok(agent, "create_agent", name="Contested", prompt="v1")
    outcomes = []

    async def write(n: int) -> None:
        async with connected(live.url, seeded.agent_token) as other:
            outcomes.append(
                await other.raw("update_agent_prompt", {"agent": made["id"], "body": f"b{n}", "basedOn": 1})
            )

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(write, n)
    assert sum(1 for _, is_error in outcomes if not is_error) == 1
    versions = await ok(agent, "list_agent_prompt_versions", agent=made["id"])
    assert [v["version"] for v in versions["versions"]] == [2, 1]


async def test_twenty_prompt_versions_a_day_per_connection(agent, monkeypatch):
    monkeypatch.setattr(rules, "PROMPT_VERSIONS_PER_DAY", 3)
    made = await ok(agent, "create_agent", name="Busy")
    for n in range(3):
        await ok(agent, "update_agent_prompt", agent=made["id"], body=f"v{n + 1}", basedOn=n)
    text = await refused(agent, "update_agent_prompt", {"agent": made["id"], "body": "v4", "basedOn": 3})
    assert "wrote 3 prompt versions" in text and "today" in text
    assert (await ok(agent, "get_agent_prompt", agent=made["id"]))["version"] == 3
    assert rules.PROMPT_VERSIONS_PER_DAY == 3 and 20 == 20


# update_agent: "Changes an agent's name, description, accent or primary tool ... The @handle (slug) is the owner's
# to change ... expectedRevision (the revision you read, to avoid overwriting a newer edit)."


async def test_update_changes_fields_checks_the_revision_and_refuses_the_handle(agent):
    made = await ok(agent, "create_agent", name="Ops")
    edited = await ok(agent, "update_agent", agent="ops", description="Keeps prod up.", expectedRevision=1)
    assert (edited["description"], edited["revision"]) == ("Keeps prod up.", 2)
    text = await refused(agent, "update_agent", {"agent": made["id"], "name": "Old", "expectedRevision": 1})
    assert "revision 2, not 1" in text
    text = await refused(agent, "update_agent", {"agent": made["id"], "slug": "new-handle"})
    assert "the owner's to change" in text
    cleared = await ok(agent, "agent", "update", agent=made["id"], primaryHarness=None)
    assert cleared["primaryTool"] is None


async def test_every_workspace_of_the_account_sees_its_agents_and_another_account_none(agent, live, runtime, seeded):
    made = await ok(agent, "create_agent", name="Shared Brain", prompt="hello")
    _, token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Second", "Same account.")
    async with connected(live.url, token.token) as neighbour:
        assert (await ok(neighbour, "get_agent_prompt", agent="shared-brain"))["body"] == "hello"
    other_account, _ = accounts.create_account(runtime.accounts, "Other")
    _, stranger = accounts.create_workspace(runtime.accounts, other_account, "Theirs", "Another account.")
    async with connected(live.url, stranger.token) as outsider:
        assert (await ok(outsider, "list_agents"))["agents"] == []
        for ref in (made["id"], "shared-brain"):
            assert "no agent" in await refused(outsider, "get_agent_prompt", {"agent": ref})
