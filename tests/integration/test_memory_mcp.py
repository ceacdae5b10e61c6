"""The `memory` tool through the SDK's own MCP client, and the human's read access over REST."""

import json

import anyio
import httpx
import pytest

from agent_workspace.domain.tokens import TokenKind
from agent_workspace.local.stack import seed
from agent_workspace.services import accounts
from tests.support import connected

pytestmark = pytest.mark.anyio


async def test_an_unwritten_memory_loads_as_nothing_saved_and_the_index_is_the_default(agent):
    text, is_error = await agent("memory", "load")
    assert not is_error and text.startswith("nothing is saved in memory://MEMORY.md yet.")
    text, is_error = await agent("memory", "load", name="deploys.md")
    assert (text, is_error) == ("nothing is saved in memory://deploys.md yet.", False)


async def test_save_replaces_the_whole_memory_and_load_shows_its_revision(agent):
    assert await agent("memory", "save", name="deploys.md", content="# v1") == (
        "memory://deploys.md saved (revision 1)",
        False,
    )
    assert (await agent("memory", "save", name="deploys.md", content="# v2"))[0].endswith("(revision 2)")
    loaded = json.loads((await agent("memory", "load", name="deploys.md"))[0])
    assert (loaded["name"], loaded["content"], loaded["revision"], loaded["uri"]) == (
        "deploys.md",
        "# v2",
        2,
        "memory://deploys.md",
    )
    await agent("memory", "save", content="- [deploys](memory://deploys.md)")
    index = json.loads((await agent("memory", "load"))[0])
    assert (index["name"], index["content"]) == ("MEMORY.md", "- [deploys](memory://deploys.md)")


async def test_earlier_revisions_are_kept_up_to_twenty_and_readable(agent):
    for number in range(1, 23):
        await agent("memory", "save", name="log.md", content=f"entry {number}")
    assert json.loads((await agent("memory", "load", name="log.md", revision=3))[0])["content"] == "entry 3"
    text, is_error = await agent("memory", "load", name="log.md", revision=2)
    assert is_error and "no revision 2" in text and "last 20" in text
    assert json.loads((await agent("memory", "load", name="log.md"))[0])["revision"] == 22


async def test_content_of_exactly_16_kib_is_kept_and_one_byte_more_is_refused_leaving_the_old(agent):
    exact = "é" * 8192  # 16,384 bytes of UTF-8
    assert not (await agent("memory", "save", name="big.md", content=exact))[1]
    text, is_error = await agent("memory", "save", name="big.md", content=exact + "x")
    assert is_error and text.startswith("memory save: content is 16,385 bytes; a memory holds at most 16,384")
    loaded = json.loads((await agent("memory", "load", name="big.md"))[0])
    assert loaded["content"] == exact and loaded["revision"] == 1


@pytest.mark.parametrize(
    "name",
    [
        "Deploys.md",
        "deploys",
        "deploys.txt",
        "de--ploys.md",
        "-deploys.md",
        "a" * 30 + ".md",
        "notes/x.md",
        "MEMORY.txt",
    ],
)
async def test_bad_names_are_refused_with_the_rule(agent, name):
    for action, extra in (("load", {}), ("save", {"content": "x"}), ("delete", {})):
        text, is_error = await agent("memory", action, name=name, **extra)
        assert is_error and f"memory {action}: name" in text and "lowercase words joined by single hyphens" in text


async def test_a_32_character_name_is_accepted(agent):
    name = "a" * 29 + ".md"
    assert len(name) == 32
    assert not (await agent("memory", "save", name=name, content="x"))[1]


async def test_delete_removes_one_memory_and_missing_is_not_an_error(agent):
    await agent("memory", "save", name="deploys.md", content="d")
    await agent("memory", "save", content="index")
    assert await agent("memory", "delete") == ("memory://MEMORY.md deleted", False)
    assert json.loads((await agent("memory", "load", name="deploys.md"))[0])["content"] == "d"
    text, is_error = await agent("memory", "delete", name="never.md")
    assert not is_error and "nothing to delete" in text
    await agent("memory", "delete", name="deploys.md")
    assert (await agent("memory", "load", name="deploys.md"))[0].startswith("nothing is saved")
    assert (await agent("memory", "save", name="deploys.md", content="again"))[0].endswith("(revision 1)")


async def test_a_stale_expected_revision_is_refused_with_the_current_content(agent):
    await agent("memory", "save", name="plan.md", content="first", expectedRevision=0)
    await agent("memory", "save", name="plan.md", content="second", expectedRevision=1)
    text, is_error = await agent("memory", "save", name="plan.md", content="mine", expectedRevision=1)
    assert is_error
    assert "is at revision 2, not 1" in text and "expectedRevision 2" in text and text.endswith("second")
    assert json.loads((await agent("memory", "load", name="plan.md"))[0])["content"] == "second"
    text, is_error = await agent("memory", "save", name="new.md", content="x", expectedRevision=3)
    assert is_error and "nothing is saved there" in text


async def test_racing_saves_with_the_same_expected_revision_let_exactly_one_win(live, runtime, seeded):
    tokens = [
        accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id).token
        for _ in range(6)
    ]
    outcomes: list[tuple[int, str, bool]] = []

    async def write(index: int, token: str) -> None:
        async with connected(live.url, token) as writer:
            text, is_error = await writer(
                "memory", "save", name="race.md", content=f"writer {index}", expectedRevision=0
            )
            outcomes.append((index, text, is_error))

    async with anyio.create_task_group() as group:
        for index, token in enumerate(tokens):
            group.start_soon(write, index, token)

    winners = [index for index, _, is_error in outcomes if not is_error]
    assert len(winners) == 1
    losers = [text for _, text, is_error in outcomes if is_error]
    assert all("is at revision 1, not 0" in text and text.endswith(f"writer {winners[0]}") for text in losers)
    async with connected(live.url, seeded.agent_token) as reader:
        stored = json.loads((await reader("memory", "load", name="race.md"))[0])
    assert (stored["content"], stored["revision"]) == (f"writer {winners[0]}", 1)


async def test_plain_saves_racing_all_land_as_successive_revisions(live, runtime, seeded):
    async def write(index: int) -> None:
        async with connected(live.url, seeded.agent_token) as writer:
            text, is_error = await writer("memory", "save", name="busy.md", content=f"writer {index}")
            assert not is_error, text

    async with anyio.create_task_group() as group:
        for index in range(5):
            group.start_soon(write, index)
    stored = runtime.memory.get(seeded.workspace_id, "busy.md")
    assert stored.revision == 5
    kept = {runtime.memory.get_revision(seeded.workspace_id, "busy.md", r).content for r in range(1, 6)}
    assert kept == {f"writer {index}" for index in range(5)}  # none lost, each a revision of its own


async def test_memory_belongs_to_its_workspace(live, runtime, seeded, agent):
    await agent("memory", "save", name="secret.md", content="only here")
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    for token in (other.token, seed(runtime).agent_token):
        async with connected(live.url, token) as stranger:
            assert (await stranger("memory", "load", name="secret.md"))[0].startswith("nothing is saved")
            await stranger("memory", "delete", name="secret.md")
    assert json.loads((await agent("memory", "load", name="secret.md"))[0])["content"] == "only here"


async def test_old_names_reach_the_memory_actions(agent):
    assert (await agent.raw("saveMemory", {"name": "old.md", "content": "legacy"}))[1] is False
    assert json.loads((await agent.raw("loadMemory", {"name": "old.md"}))[0])["content"] == "legacy"
    assert (await agent.raw("deleteMemory", {"name": "old.md"}))[0] == "memory://old.md deleted"


@pytest.mark.parametrize("action", ["load", "save", "delete"])
async def test_every_action_refuses_unknown_fields(agent, action):
    text, is_error = await agent("memory", action, nmae="x.md")
    assert is_error and text.startswith(f"memory {action}: ") and "unknown field 'nmae' (did you mean 'name'?)" in text


async def test_the_human_reads_the_memory_over_rest(live, runtime, seeded, agent):
    await agent("memory", "save", name="deploys.md", content="# How we ship")
    headers = {"authorization": f"Bearer {seeded.human_token}"}
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/memory"
    listed = httpx.get(base, headers=headers).json()
    assert [(m["name"], m["revision"], m["size"]) for m in listed] == [("deploys.md", 1, 13)]
    assert httpx.get(f"{base}/deploys.md", headers=headers).json()["content"] == "# How we ship"
    assert httpx.get(f"{base}/missing.md", headers=headers).status_code == 404
    stranger = seed(runtime)
    assert httpx.get(base, headers={"authorization": f"Bearer {stranger.human_token}"}).status_code == 404
