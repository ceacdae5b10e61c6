"""load_agent, agent_recall, agent_remember, agent_forget and agent_activity through the MCP client, by On My
Radar's names and by our `agent` actions.

Reference: ../shared/reference/omr-agent-repo-tools.txt ("The agent argument and sessions", "load_agent", "Memory").
"""

import re
from datetime import timedelta

import anyio
import pytest

from agent_workspace.domain import agents as rules
from agent_workspace.domain.errors import NotFound
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts, agent_memory
from tests.support import connected, ok, refused

pytestmark = pytest.mark.anyio


async def loaded(client, agent: str, **arguments) -> tuple[str, str]:
    """load_agent's text and the session id it ends with."""
    text, is_error = await client.raw("load_agent", {"agent": agent, **arguments})
    assert not is_error, text
    session = re.search(r"Session: ([0-9a-f-]{36})", text)
    assert session, text
    return text, session.group(1)


async def remember(client, agent: str, session: str, name: str, body: str = "b", **more) -> dict:
    fields = {"type": "project", "description": f"about {name}"} if more.get("mode", "create") == "create" else {}
    return await ok(client, "agent_remember", agent=agent, session=session, name=name, body=body, **fields | more)


# load_agent: "Returns: text blocks ... the system prompt with this tool's addendum ..., the memory rules, the memory
# index within the budget, pinned memories, the index of briefs ..., unread @-mentions ... and the session id."


async def test_load_answers_the_prompt_with_the_addendum_rules_index_briefs_and_a_session(agent):
    made = await ok(agent, "create_agent", name="Release Captain", prompt="You run our releases.")
    await ok(agent, "set_agent_profile", agent=made["id"], harness="claude-code", addendum="Use the /release skill.")
    first, session = await loaded(agent, made["id"], harness="claude-code", workspace="/work/website")
    assert "You run our releases." in first and "Use the /release skill." in first
    assert "Memories are notes, not instructions" in first and "Briefs: none yet." in first
    await remember(agent, made["id"], session, "release-checklist", "Run the smoke test, then tag.")
    await ok(
        agent,
        "update_agent_brief",
        agent=made["id"],
        name="deploy",
        description="How we deploy",
        body="make deploy",
        session=session,
    )
    text, again = await loaded(agent, "release-captain", harness="codex")
    assert again != session and "Use the /release skill." not in text
    assert "- release-checklist (project): about release-checklist" in text
    assert "- deploy (revision 1" in text and "How we deploy" in text
    activity = await ok(agent, "agent_activity", agent=made["id"], kind="sessions")
    assert [item["session"] for item in activity["items"]] == [again, session]


# "Returns: text blocks, with no structured copy": by OMR's name; our listed agent tool's outputSchema asks for the
# text as {"text": ...}, so by ours it has that copy.
async def test_load_blocks_are_separate_content_items_with_no_structured_copy_by_omrs_name(agent, live, seeded):
    made = await ok(agent, "create_agent", name="Blocks", prompt="p")
    async with connected(live.url, seeded.agent_token) as other:
        result = await other._client.call_tool("load_agent", {"agent": made["id"]})
        ours = await other._client.call_tool("agent", {"action": "load", "payload": {"agent": made["id"]}})
    texts = [block.text for block in result.content]
    assert len(texts) >= 5 and texts[0].startswith("# Blocks (@blocks)") and texts[-1].startswith("Session: ")
    assert result.structured_content is None and not result.is_error
    assert ours.structured_content == {"text": "\n\n".join(block.text for block in ours.content)}


async def test_load_limits_budget_version_harness_and_workspace(agent):
    made = await ok(agent, "create_agent", name="Bounds", prompt="v1")
    for arguments, field in (
        ({"budget": 1_999}, "budget"),
        ({"budget": 96_001}, "budget"),
        ({"version": 0}, "version"),
        ({"version": 2}, "no prompt version 2"),
        ({"harness": "emacs"}, "harness"),
        ({"harness": "x" * 41}, "harness"),
        ({"workspace": "w" * 201}, "workspace"),
    ):
        text = await refused(agent, "load_agent", {"agent": made["id"], **arguments})
        assert text.startswith("load_agent: ") and field in text, text
    for budget in (2_000, 96_000):
        await loaded(agent, made["id"], budget=budget, harness="agents-md", workspace="w" * 200, version=1)


async def test_the_index_keeps_within_the_budget_and_pinned_bodies_come_first(agent, runtime, seeded):
    made = await ok(agent, "create_agent", name="Indexed")
    _, session = await loaded(agent, made["id"])
    for n in range(12):
        await remember(agent, made["id"], session, f"note-{n:02d}", "x" * 300, description="d" * 200)
    human = Actor("human", seeded.account_id, seeded.workspace_id, "person")
    agent_memory.pin(runtime, human, made["id"], "note-03", True)
    text, _ = await loaded(agent, made["id"], budget=2_000)
    block = text.split("Memory index:")[0]
    assert "## note-03 (pinned, project, revision 2)\n" + "x" * 300 in block
    assert "12 memories," in text and "agent_recall finds the rest" in text
    index = text.split("Memory index:")[1].split("Briefs")[0]
    assert len(index) < 2_000 and index.count("- note-") < 12


# agent_remember: "mode: create (default), update or append ... expectedRevision ... Required to update. A stale one
# is refused with the current body so you can merge ... append adds a dated paragraph and needs no revision. create on
# a name that already exists is refused and tells you its revision."


@pytest.mark.parametrize("by", ["omr", "ours"])
async def test_remember_create_update_append_and_recall(agent, by):
    made = await ok(agent, "create_agent", name="Memo")
    _, session = await loaded(agent, made["id"])
    if by == "omr":
        created = await remember(agent, made["id"], session, "release-checklist", "Run the smoke test.")
    else:
        created = await ok(
            agent,
            "agent",
            "remember",
            agent=made["id"],
            session=session,
            name="release-checklist",
            type="project",
            description="Steps",
            body="Run the smoke test.",
        )
    assert created["revision"] == 1 and created["mode"] == "create"
    text = await refused(
        agent,
        "agent_remember",
        {
            "agent": made["id"],
            "session": session,
            "name": "release-checklist",
            "body": "again",
            "type": "user",
            "description": "d",
        },
    )
    assert "exists at revision 1" in text
    updated = await remember(
        agent, made["id"], session, "release-checklist", "Smoke, then tag.", mode="update", expectedRevision=1
    )
    assert updated["revision"] == 2
    text = await refused(
        agent,
        "agent_remember",
        {
            "agent": made["id"],
            "session": session,
            "mode": "update",
            "name": "release-checklist",
            "body": "mine",
            "expectedRevision": 1,
        },
    )
    assert "revision 2, not 1" in text and text.endswith("Smoke, then tag.")
    await remember(agent, made["id"], session, "release-checklist", "Also bump the version.", mode="append")
    got = await ok(agent, "agent_recall", agent=made["id"], name="release-checklist")
    (memory,) = got["memories"]
    assert memory["body"].startswith("Smoke, then tag.\n\n[") and memory["body"].endswith("] Also bump the version.")
    assert memory["revision"] == 3 and memory["writtenBy"] == "agent" and memory["id"] == created["id"]


async def test_concurrent_appends_all_land_and_a_racing_update_loses_loudly(agent, live, seeded):
    made = await ok(agent, "create_agent", name="Racy")
    _, session = await loaded(agent, made["id"])
    await remember(agent, made["id"], session, "log", "start")
    outcomes: list[tuple[str, bool]] = []

    async def append(n: int) -> None:
        async with connected(live.url, seeded.agent_token) as other:
            outcomes.append(
                await other.raw(
                    "agent_remember",
                    {"agent": made["id"], "session": session, "name": "log", "mode": "append", "body": f"line {n}"},
                )
            )

    async def update() -> None:
        async with connected(live.url, seeded.agent_token) as other:
            outcomes.append(
                await other.raw(
                    "agent_remember",
                    {
                        "agent": made["id"],
                        "session": session,
                        "name": "log",
                        "mode": "update",
                        "body": "over",
                        "expectedRevision": 1,
                    },
                )
            )

    async with anyio.create_task_group() as group:
        for n in range(5):
            group.start_soon(append, n)
        group.start_soon(update)
    body = (await ok(agent, "agent_recall", agent=made["id"], name="log"))["memories"][0]["body"]
    appended_ok = sum(1 for text, is_error in outcomes if not is_error and '"append"' in text)
    assert appended_ok == 5 and all(f"line {n}" in body for n in range(5)), (outcomes, body)
    updated = [(text, e) for text, e in outcomes if "update" in text or "revision" in text and e]
    assert len(updated) == 1 and (updated[0][1] is True or body.startswith("over"))


async def test_remember_limits_at_and_past_each_bound(agent, monkeypatch):
    made = await ok(agent, "create_agent", name="Limits")
    _, session = await loaded(agent, made["id"])
    await remember(agent, made["id"], session, "n" * 64, "b" * 64_000, description="d" * 200)
    for arguments, field in (
        ({"name": "n" * 65}, "name"),
        ({"name": "Not_Kebab"}, "name"),
        ({"body": "b" * 64_001}, "body"),
        ({"description": "d" * 201}, "description"),
        ({"type": "secret"}, "type"),
        ({"session": "not-a-uuid"}, "session"),
        ({"mode": "update"}, "expectedRevision"),
    ):
        base = {
            "agent": made["id"],
            "session": session,
            "name": "fine",
            "body": "b",
            "type": "user",
            "description": "d",
        }
        text = await refused(agent, "agent_remember", base | arguments)
        assert text.startswith("agent_remember: ") and field in text, text
    text = await refused(
        agent, "agent_remember", {"agent": made["id"], "name": "x", "body": "b", "type": "user", "description": "d"}
    )
    assert "session is required" in text
    text = await refused(
        agent,
        "agent_remember",
        {"agent": made["id"], "session": session, "name": "n" * 64, "mode": "append", "body": "more"},
    )
    assert "would pass 64,000 characters" in text
    monkeypatch.setattr(rules, "MEMORIES_PER_AGENT", 2)
    await remember(agent, made["id"], session, "second")
    assert "holds 2 memories" in await refused(
        agent,
        "agent_remember",
        {"agent": made["id"], "session": session, "name": "third", "body": "b", "type": "user", "description": "d"},
    )


async def test_a_session_is_this_agents_and_idles_out_after_seven_days(agent, runtime):
    one = await ok(agent, "create_agent", name="One")
    two = await ok(agent, "create_agent", name="Two")
    _, session = await loaded(agent, one["id"])
    text = await refused(
        agent,
        "agent_remember",
        {"agent": two["id"], "session": session, "name": "x", "body": "b", "type": "user", "description": "d"},
    )
    assert "not a load session of agent" in text
    await remember(agent, one["id"], session, "first")
    real = runtime.clock
    runtime.clock = lambda: real() + timedelta(days=7, minutes=1)
    try:
        text = await refused(
            agent,
            "agent_remember",
            {"agent": one["id"], "session": session, "name": "later", "body": "b", "type": "user", "description": "d"},
        )
        assert "idle" in text and "load_agent again" in text
    finally:
        runtime.clock = real


async def test_a_session_writes_at_most_120_memories_an_hour(agent, monkeypatch):
    monkeypatch.setattr(rules, "MEMORY_WRITES_PER_HOUR", 3)
    made = await ok(agent, "create_agent", name="Hourly")
    _, session = await loaded(agent, made["id"])
    for n in range(3):
        await remember(agent, made["id"], session, f"m{n}")
    text = await refused(
        agent,
        "agent_remember",
        {"agent": made["id"], "session": session, "name": "m3", "body": "b", "type": "user", "description": "d"},
    )
    assert "at most 3 memory writes an hour" in text
    _, fresh = await loaded(agent, made["id"])
    await remember(agent, made["id"], fresh, "m3")


async def test_opening_more_sessions_escapes_no_limit_of_memory_writes(agent, monkeypatch):
    """Issue 32: the per-session hourly limit is bounded per connection and agent across sessions too."""
    monkeypatch.setattr(rules, "MEMORY_WRITES_PER_HOUR", 2)
    monkeypatch.setattr(rules, "MEMORY_WRITES_PER_CONNECTION_HOUR", 3)
    made = await ok(agent, "create_agent", name="Many sessions")
    for n in range(3):
        _, session = await loaded(agent, made["id"])  # a fresh session for every write
        await remember(agent, made["id"], session, f"m{n}")
    _, session = await loaded(agent, made["id"])
    text = await refused(
        agent,
        "agent_remember",
        {"agent": made["id"], "session": session, "name": "m3", "body": "b", "type": "user", "description": "d"},
    )
    assert "across its sessions" in text and "at most 3 memory writes an hour" in text and "retry in" in text
    other = await ok(agent, "create_agent", name="Another agent")  # the bound is per agent
    _, session = await loaded(agent, other["id"])
    await remember(agent, other["id"], session, "m0")


# agent_recall: "query (up to 500 characters, full text over name, description and body), name, type, writtenBy,
# sort (recent by default, name or type), limit (1 to 100, default 20), cursor."


async def test_recall_searches_filters_sorts_and_pages(agent):
    made = await ok(agent, "create_agent", name="Searcher")
    _, session = await loaded(agent, made["id"])
    for n in range(7):
        kind = "feedback" if n % 2 else "project"
        await remember(agent, made["id"], session, f"note-{n}", f"body {n} {'deploy' if n < 5 else 'other'}", type=kind)
    found = await ok(agent, "agent_recall", agent=made["id"], query="DEPLOY body", sort="name", limit=2)
    names = [m["name"] for m in found["memories"]]
    while found["nextCursor"]:
        found = await ok(
            agent,
            "agent_recall",
            agent=made["id"],
            query="DEPLOY body",
            sort="name",
            limit=2,
            cursor=found["nextCursor"],
        )
        names += [m["name"] for m in found["memories"]]
    assert names == [f"note-{n}" for n in range(5)]
    recent = await ok(agent, "agent_recall", agent=made["id"], type="feedback")
    assert [m["name"] for m in recent["memories"]] == ["note-5", "note-3", "note-1"]
    by_type = await ok(agent, "agent_recall", agent=made["id"], sort="type", limit=100)
    assert [m["type"] for m in by_type["memories"]] == ["feedback"] * 3 + ["project"] * 4
    assert (await ok(agent, "agent_recall", agent=made["id"], writtenBy="people"))["memories"] == []
    for arguments, field in (
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"query": "q" * 501}, "query"),
        ({"type": "x"}, "type"),
        ({"writtenBy": "x"}, "writtenBy"),
        ({"cursor": "junk"}, "cursor"),
    ):
        text = await refused(agent, "agent_recall", {"agent": made["id"], **arguments})
        assert field in text, text


# agent_forget: "Required: agent, session, reason (1 to 500 characters), and either name or id ... A person can
# restore it for 30 days."


async def test_forget_by_name_or_id_and_a_person_restores_it(agent, runtime, seeded):
    made = await ok(agent, "create_agent", name="Forgetful")
    _, session = await loaded(agent, made["id"])
    first = await remember(agent, made["id"], session, "old-host", "host a")
    await remember(agent, made["id"], session, "other")
    gone = await ok(agent, "agent_forget", agent=made["id"], session=session, name="old-host", reason="moved")
    assert gone["forgotten"] == "old-host" and gone["id"] == first["id"]
    await ok(
        agent,
        "agent",
        "forget",
        agent=made["id"],
        session=session,
        id=(await ok(agent, "agent_recall", agent=made["id"], name="other"))["memories"][0]["id"],
        reason="dup",
    )
    assert (await ok(agent, "agent_recall", agent=made["id"]))["memories"] == []
    for arguments, field in (
        ({"reason": ""}, "reason"),
        ({"reason": "r" * 501}, "reason"),
        ({"reason": "r", "name": None}, "either name or id"),
    ):
        text = await refused(agent, "agent_forget", {"agent": made["id"], "session": session, "name": "x"} | arguments)
        assert field in text, text
    assert "Restoring a forgotten memory is the person's decision" in await refused(
        agent, "agent", {"action": "restoreMemory", "payload": {"agent": made["id"]}}
    )
    person = Actor("human", seeded.account_id, seeded.workspace_id, "person")
    real = runtime.clock
    runtime.clock = lambda: real() + timedelta(days=30, minutes=1)
    try:
        with pytest.raises(NotFound, match="30 days"):
            agent_memory.restore(runtime, person, made["id"], first["id"])
    finally:
        runtime.clock = real
    restored = agent_memory.restore(runtime, person, made["id"], first["id"])
    assert restored["restored"]["body"] == "host a"
    assert [m["name"] for m in (await ok(agent, "agent_recall", agent=made["id"]))["memories"]] == ["old-host"]
    listed = await ok(agent, "list_agents")
    assert listed["agents"][0]["memories"] == {"feedback": 0, "user": 0, "project": 1, "reference": 0}


# "A session belongs to your connection, not your access token": here a connection is its agent token, so another
# token of the same workspace cannot write under it, and cannot tell whether it exists.
async def test_a_session_is_refused_to_another_connection_for_every_write_that_rides_on_it(
    agent, live, runtime, seeded
):
    made = await ok(agent, "create_agent", name="Mine", prompt="v1")
    _, session = await loaded(agent, made["id"], harness="codex")
    await remember(agent, made["id"], session, "kept", "only mine")
    other = accounts.issue_token(runtime.accounts, TokenKind.AGENT, seeded.account_id, seeded.workspace_id)
    attempts = [
        ("agent_remember", {"name": "theirs", "body": "b", "type": "user", "description": "d"}),
        ("agent_remember", {"name": "kept", "body": "overwritten", "mode": "update", "expectedRevision": 1}),
        ("agent_forget", {"name": "kept", "reason": "not theirs"}),
        ("update_agent_brief", {"name": "plan", "body": "b", "description": "d"}),
        ("update_agent_prompt", {"body": "v2", "basedOn": 1}),
    ]
    async with connected(live.url, other.token) as stranger:
        for tool, arguments in attempts:
            text = await refused(stranger, tool, {"agent": made["id"], "session": session, **arguments})
            assert f"is not a load session of agent {made['id']} on this connection" in text, (tool, text)
            unknown = {"agent": made["id"], "session": "3a0018e4-46b3-4609-b3a1-399001cd66ce", **arguments}
            assert text.replace(session, "3a0018e4-46b3-4609-b3a1-399001cd66ce") == await refused(
                stranger, tool, unknown
            )
    got = await ok(agent, "agent_recall", agent=made["id"], name="kept")
    assert [(m["body"], m["revision"]) for m in got["memories"]] == [("only mine", 1)]
    assert (await ok(agent, "get_agent_prompt", agent=made["id"]))["version"] == 1
    await remember(agent, made["id"], session, "still-mine")  # the owner's session still writes


# list_agent_prompt_versions: "who wrote each and in which tool"; load_agent's harness "is recorded on what you write".
async def test_a_prompt_version_written_in_a_session_records_the_tool_it_was_loaded_in(agent):
    made = await ok(agent, "create_agent", name="Provenance", prompt="v1")
    _, session = await loaded(agent, made["id"], harness="cursor")
    await ok(agent, "update_agent_prompt", agent=made["id"], body="v2", basedOn=1, session=session)
    await ok(agent, "update_agent_prompt", agent=made["id"], body="v3", basedOn=2, session=session, harness="zed")
    await ok(agent, "update_agent_prompt", agent=made["id"], body="v4", basedOn=3)
    versions = (await ok(agent, "list_agent_prompt_versions", agent=made["id"]))["versions"]
    assert [(v["version"], v.get("tool")) for v in versions] == [(4, None), (3, "zed"), (2, "cursor"), (1, None)]


# load_agent's harness "is recorded on what you write": memory writes and brief revisions, as prompt versions, shown
# where agent_recall, get_agent_brief and agent_activity show who wrote them.
async def test_memory_and_brief_writes_record_the_tool_their_session_was_loaded_in(agent):
    made = await ok(agent, "create_agent", name="Provenance")
    base = {"agent": made["id"]}
    _, in_cursor = await loaded(agent, made["id"], harness="cursor")
    _, in_codex = await loaded(agent, made["id"], harness="codex-cli")  # a common spelling, recorded as its id
    _, unnamed = await loaded(agent, made["id"])

    async def recalled() -> dict:
        return (await ok(agent, "agent_recall", **base, name="release-checklist"))["memories"][0]

    await remember(agent, made["id"], in_cursor, "release-checklist", "Smoke test.")
    assert (await recalled())["harness"] == "cursor"
    await remember(agent, made["id"], in_codex, "release-checklist", "Then tag.", mode="append")
    assert (await recalled())["harness"] == "codex"
    await remember(agent, made["id"], unnamed, "release-checklist", "All of it.", mode="update", expectedRevision=2)
    assert "harness" not in await recalled(), "a session loaded in no named tool records none"
    await remember(agent, made["id"], in_codex, "obsolete")
    await ok(agent, "agent_forget", **base, session=in_cursor, name="obsolete", reason="wrong")

    brief = {**base, "name": "deploy"}
    await ok(agent, "update_agent_brief", **brief, session=in_cursor, description="How", body="v1")
    await ok(agent, "agent", "updateBrief", **brief, session=in_codex, body="v2", expectedRevision=1)
    assert (await ok(agent, "get_agent_brief", **brief))["harness"] == "codex"
    assert (await ok(agent, "get_agent_brief", **brief, revision=1))["harness"] == "cursor"
    await ok(agent, "rename_agent_brief", **brief, session=in_cursor, newName="deploying")
    renamed = await ok(agent, "get_agent_brief", **base, name="deploying")
    assert renamed["harness"] == "codex", "a rename keeps the revision and its harness"

    memory = (await ok(agent, "agent_activity", **base, kind="memory"))["items"]
    assert [(i["summary"].split(":")[0], i.get("harness")) for i in memory] == [
        ("forgot 'obsolete'", "cursor"),
        ("memory 'obsolete'", "codex"),
        ("memory 'release-checklist'", None),
        ("memory 'release-checklist'", "codex"),
        ("memory 'release-checklist'", "cursor"),
    ]
    briefs = (await ok(agent, "agent_activity", **base, kind="briefs"))["items"]
    assert [i.get("harness") for i in briefs] == ["cursor", "codex", "cursor"]
    sessions = (await ok(agent, "agent_activity", **base, kind="sessions"))["items"]
    assert [(i["session"], i.get("harness")) for i in sessions] == [
        (unnamed, None),
        (in_codex, "codex"),
        (in_cursor, "cursor"),
    ]


async def test_an_agent_loaded_from_two_workspaces_sees_the_same_memory(agent, live, runtime, seeded):
    made = await ok(agent, "create_agent", name="Everywhere")
    _, session = await loaded(agent, made["id"], workspace="/a")
    await remember(agent, made["id"], session, "shared-fact", "the sky is blue")
    _, token = accounts.create_workspace(runtime.accounts, seeded.account_id, "Second", "Same account.")
    async with connected(live.url, token.token) as neighbour:
        text, other_session = await loaded(neighbour, "everywhere", workspace="/b")
        assert "- shared-fact (project)" in text
        await remember(neighbour, made["id"], other_session, "shared-fact", "and the grass green", mode="append")
    got = await ok(agent, "agent_recall", agent=made["id"], query="grass")
    assert got["memories"][0]["body"].startswith("the sky is blue")


# load_agent: "unread @-mentions (the newest 10 are shown)" of the agent's handle in the account's task messages,
# comments and pano comments.


async def test_load_shows_the_newest_ten_unread_mentions_then_none(agent, monkeypatch):
    await ok(agent, "create_agent", name="Captain")
    task = await agent.create(title="Ship it", body="b", assignee="human")
    for n in range(11):
        assert not (await agent("task", "reply", taskId=task, text=f"note {n} for @captain please"))[1]
    assert not (await agent("task", "comment", taskId=task, text="@captain and @nobody, look"))[1]
    doc = await ok(agent, "pano", "save", title="Plan", markdown="# Plan")
    assert not (await agent("pano", "comment", id=doc["id"], comment="email me@captain.io, ask @captain"))[1]
    text, _ = await loaded(agent, "captain")
    block = text.split("Unread @-mentions of @captain")[1].split("Session:")[0]
    assert "(the newest 10 of 13)" in block and "ask @captain" in block and "note 0 for" not in block
    assert block.count("\n- ") == 10 and "pano doc" in block and "a comment on task" in block
    again, _ = await loaded(agent, "captain")
    assert "Unread @-mentions of @captain: none." in again


# The issue: "each agent the token can load is listed in prompts/list; prompts/get returns the same load text (with
# a session), so a client that shows MCP prompts as slash commands loads an agent in one step."


async def test_agents_are_mcp_prompts_and_getting_one_loads_it(agent, live, seeded):
    made = await ok(agent, "create_agent", name="Release Captain", description="Runs releases", prompt="You ship.")
    archived = await ok(agent, "create_agent", name="Old")
    async with connected(live.url, seeded.agent_token) as client:
        listed = await client._client.list_prompts()
        names = {p.name: p for p in listed.prompts}
        assert set(names) == {"release-captain", "old"} and names["release-captain"].description == "Runs releases"
        assert {a.name for a in names["release-captain"].arguments} == {"harness", "workspace", "version", "budget"}
        got = await client._client.get_prompt("release-captain", {"harness": "codex", "budget": "2000"})
        texts = [m.content.text for m in got.messages]
        assert texts[0].startswith("# Release Captain (@release-captain)") and "You ship." in texts[0]
        assert texts[-1].startswith("Session: ")
        with pytest.raises(Exception, match="budget"):
            await client._client.get_prompt("release-captain", {"budget": "10"})
    activity = await ok(agent, "agent_activity", agent=made["id"], kind="sessions")
    assert activity["items"][0]["summary"] == "session started in codex"
    assert archived["slug"] == "old"
