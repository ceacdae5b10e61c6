"""Profiles, briefs, checkout, import and export through the MCP client by On My Radar's names and our actions.

Reference: ../shared/reference/omr-agent-repo-tools.txt ("get_agent_profiles" … "export_agent").
"""

import json
import re
from pathlib import Path

import anyio
import pytest

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_bundle import render_memory_file
from tests.support import connected, ok, refused
from tests.unit.test_agent_checkout import apply

pytestmark = pytest.mark.anyio


async def session_of(client, agent: str) -> str:
    text, is_error = await client.raw("load_agent", {"agent": agent})
    assert not is_error, text
    return re.search(r"Session: ([0-9a-f-]{36})", text).group(1)


# get_agent_profiles / set_agent_profile / delete_agent_profile: "Settings are checked against that tool's own
# fields, and anything the tool would not accept is refused by name ... Refused while the owner has locked the
# prompt ... not found if the agent has no profile for that tool ... Returns: { "removed": "<harness>" }."


@pytest.mark.parametrize("by", ["omr", "ours"])
async def test_profiles_are_checked_per_harness_and_fall_back_to_the_default(agent, by):
    made = await ok(agent, "create_agent", name="Profiled", primaryHarness="codex", profile={"model": "gpt-5"})
    set_profile = ("set_agent_profile", None) if by == "omr" else ("agent", "setProfile")
    await ok(
        agent,
        *set_profile,
        agent=made["id"],
        harness="claude-code",
        settings={"model": "opus", "permissionMode": "plan", "maxTurns": None},
        addendum="a" * 8_000,
    )
    await ok(agent, "set_agent_profile", agent=made["id"], harness="default", settings={"effort": "high"})
    got = await ok(agent, "get_agent_profiles", agent=made["id"])
    assert got["default"]["settings"] == {"effort": "high"}
    assert set(got["profiles"]) == {"codex", "claude-code"} and got["profiles"]["codex"]["settings"] == {
        "model": "gpt-5"
    }
    for arguments, field in (
        ({"harness": "codex", "settings": {"permissionMode": "plan"}}, "settings.permissionMode"),
        ({"harness": "cursor", "settings": {"model": "m" * 401}}, "settings.model"),
        ({"harness": "cursor", "settings": {"model": 3}}, "settings.model"),
        # "anything the tool would not accept is refused by name": its values too, not only its setting names
        ({"harness": "claude-code", "settings": {"permissionMode": "notAMode"}}, "settings.permissionMode"),
        ({"harness": "claude-code", "settings": {"permissionMode": True}}, "settings.permissionMode"),
        ({"harness": "claude-code", "settings": {"maxTurns": "lots"}}, "settings.maxTurns"),
        ({"harness": "codex", "settings": {"sandbox_mode": "nonsense"}}, "settings.sandbox_mode"),
        ({"harness": "codex", "settings": {"approval_policy": True}}, "settings.approval_policy"),
        ({"harness": "cursor", "addendum": "a" * 8_001}, "addendum"),
        ({"harness": "emacs"}, "harness"),
    ):
        text = await refused(agent, "set_agent_profile", {"agent": made["id"], **arguments})
        assert field in text, text
    stale = await refused(
        agent, "set_agent_profile", {"agent": made["id"], "harness": "claude-code", "expectedRevision": 7}
    )
    assert "revision 1, not 7" in stale
    assert await ok(agent, "delete_agent_profile", agent=made["id"], harness="claude-code") == {
        "removed": "claude-code"
    }
    assert "no profile for claude-code" in await refused(
        agent, "delete_agent_profile", {"agent": made["id"], "harness": "claude-code"}
    )
    listed = (await ok(agent, "list_agents"))["agents"][0]
    assert listed["tools"] == ["codex", "default"]


# Briefs: "Markdown of up to 16,384 bytes of UTF-8, and an agent can have up to 20 ... Without expectedRevision it
# creates: a description is required, and a name that already exists is refused with its revision. With
# expectedRevision it updates, and a stale one is refused with the current body ... 40 brief changes per agent per
# day, and a rename counts as one."


async def test_briefs_create_update_read_revisions_and_rename(agent):
    made = await ok(agent, "create_agent", name="Briefed")
    session = await session_of(agent, made["id"])
    base = {"agent": made["id"], "session": session}
    assert (await ok(agent, "update_agent_brief", **base, name="deploy", description="How", body="é" * 8_192))[
        "revision"
    ] == 1
    assert "exists at revision 1" in await refused(
        agent, "update_agent_brief", {**base, "name": "deploy", "description": "d", "body": "x"}
    )
    await ok(agent, "agent", "updateBrief", **base, name="deploy", body="v2", expectedRevision=1, note="shorter")
    text = await refused(agent, "update_agent_brief", {**base, "name": "deploy", "body": "v3", "expectedRevision": 1})
    assert "revision 2, not 1" in text and text.endswith("v2")
    assert (await ok(agent, "get_agent_brief", agent=made["id"], name="deploy"))["body"] == "v2"
    assert (await ok(agent, "get_agent_brief", agent=made["id"], name="deploy", revision=1))["body"] == "é" * 8_192
    await ok(agent, "rename_agent_brief", **base, name="deploy", newName="deploying")
    listed = await ok(agent, "list_agent_briefs", agent=made["id"])
    assert [(b["name"], b["revision"]) for b in listed["briefs"]] == [("deploying", 2)]
    assert all("body" not in b for b in listed["briefs"])
    assert (await ok(agent, "get_agent_brief", agent=made["id"], name="deploying", revision=1))["body"] == "é" * 8_192
    for arguments, field in (
        ({"name": "big", "description": "d", "body": "é" * 8_193}, "16,386 bytes"),
        ({"name": "Bad Name", "description": "d", "body": "x"}, "name"),
        ({"name": "nodesc", "body": "x"}, "description is required"),
        ({"name": "x", "description": "d", "body": "x", "session": None}, "session is required"),
    ):
        text = await refused(agent, "update_agent_brief", {**base, **arguments})
        assert field in text, text
    other = await ok(agent, "create_agent", name="Other")
    text = await refused(
        agent,
        "update_agent_brief",
        {"agent": other["id"], "session": session, "name": "x", "description": "d", "body": "x"},
    )
    assert "not a load session of agent" in text


async def test_twenty_briefs_and_forty_changes_a_day(agent, monkeypatch):
    monkeypatch.setattr(rules, "BRIEFS_PER_AGENT", 2)
    monkeypatch.setattr(rules, "BRIEF_CHANGES_PER_DAY", 4)
    made = await ok(agent, "create_agent", name="Capped")
    base = {"agent": made["id"], "session": await session_of(agent, made["id"])}
    for name in ("one", "two"):
        await ok(agent, "update_agent_brief", **base, name=name, description="d", body="b")
    assert "has 2 briefs" in await refused(
        agent, "update_agent_brief", {**base, "name": "three", "description": "d", "body": "b"}
    )
    await ok(agent, "rename_agent_brief", **base, name="one", newName="uno")
    await ok(agent, "update_agent_brief", **base, name="two", body="b2", expectedRevision=1)
    text = await refused(agent, "update_agent_brief", {**base, "name": "two", "body": "b3", "expectedRevision": 2})
    assert "at most 4 brief changes per agent a day" in text


async def test_racing_brief_updates_on_one_revision_one_wins(agent, live, seeded):
    made = await ok(agent, "create_agent", name="Raced")
    base = {"agent": made["id"], "session": await session_of(agent, made["id"])}
    await ok(agent, "update_agent_brief", **base, name="facts", description="d", body="v1")
    outcomes = []

    async def write(n: int) -> None:
        async with connected(live.url, seeded.agent_token) as other:
            outcomes.append(
                await other.raw("update_agent_brief", {**base, "name": "facts", "body": f"b{n}", "expectedRevision": 1})
            )

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(write, n)
    assert sum(1 for _, is_error in outcomes if not is_error) == 1
    assert (await ok(agent, "get_agent_brief", agent=made["id"], name="facts"))["revision"] == 2


# checkout_agent: "Returns the exact file operations that make a workspace load this agent at session start ... The
# files hold a pointer, not the prompt ... no credential is included."


@pytest.mark.parametrize("harness", ["claude-code", "codex", "cursor", "other"])
async def test_checkout_operations_applied_to_a_directory_point_at_the_agent(agent, seeded, tmp_path: Path, harness):
    made = await ok(agent, "create_agent", name="Pointer", prompt="SECRET PROMPT BODY", primaryHarness=harness)
    result = await ok(agent, "checkout_agent", agent=made["id"], harness=harness)
    apply(tmp_path, result)
    files = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    assert json.loads(files[".omr/agent.json"])["agent"] == made["id"]
    assert len(files) >= 2 or harness == "claude-ai"
    for text in files.values():
        assert "SECRET PROMPT BODY" not in text and seeded.agent_token not in text
    assert any("load_agent" in text and made["id"] in text for text in files.values())
    assert seeded.agent_token not in result["connect"] and "/mcp" in result["connect"]


async def test_checkout_helper_snapshot_and_withheld(agent, tmp_path: Path):
    made = await ok(
        agent,
        "create_agent",
        name="Helper",
        prompt="body here",
        primaryHarness="claude-code",
        profile={"model": "opus", "effort": "high"},
    )
    session = await session_of(agent, made["id"])
    await ok(
        agent,
        "agent_remember",
        agent=made["id"],
        session=session,
        name="note",
        type="user",
        description="d",
        body="private note",
    )
    helper = await ok(agent, "agent", "checkout", agent=made["id"], harness="claude-code", mode="helper")
    apply(tmp_path, helper)
    assert (tmp_path / ".claude/agents/helper.md").read_text().count("model: opus") == 1
    primary = await ok(agent, "checkout_agent", agent=made["id"], harness="claude-code", snapshot=True)
    apply(tmp_path, primary)
    assert "private note" in (tmp_path / ".omr/snapshot/helper.md").read_text()
    assert ".omr/snapshot/" in (tmp_path / ".gitignore").read_text()
    assert {w["setting"] for w in primary["withheld"]} >= {"model", "effort"}


# import_agent / export_agent: "Creates an agent from an existing definition in one call ... for example a Claude Code
# subagent file and its memory directory ... Refused if the slug already exists." "Returns the agent as one bundle
# ... in the shape import_agent takes."


async def test_import_a_claude_code_subagent_and_memory_files_then_export_round_trips(agent):
    subagent = "---\nname: code-reviewer\ndescription: Reviews code\nmodel: sonnet\ntools: Read, Grep\n---\n\nReview."
    memory = render_memory_file({"name": "house-style", "type": "feedback", "description": "Style", "body": "No nits."})
    made = await ok(
        agent,
        "import_agent",
        subagent=subagent,
        memories=[{"file": memory}],
        briefs=[{"name": "repo", "description": "The repo", "body": "make test"}],
    )
    assert (made["slug"], made["primaryTool"], made["imported"]) == (
        "code-reviewer",
        "claude-code",
        {"memories": 1, "briefs": 1, "profiles": 1},
    )
    bundle = await ok(agent, "export_agent", agent=made["id"])
    assert bundle["prompt"] == "Review." and bundle["profiles"]["claude-code"]["settings"]["model"] == "sonnet"
    assert bundle["memories"] == [
        {"name": "house-style", "type": "feedback", "description": "Style", "body": "No nits."}
    ]
    assert "slug 'code-reviewer' is taken" in await refused(agent, "import_agent", bundle)
    again = await ok(agent, "agent", "import", **{**bundle, "slug": "copy"})
    copy = await ok(agent, "export_agent", agent=again["id"])
    assert {**copy, "slug": "code-reviewer"} == bundle
    for arguments, field in (
        (
            {"name": "x", "memories": [{"name": "a", "type": "bad", "description": "d", "body": "b"}]},
            "memories[0].type",
        ),
        ({"name": "x", "briefs": [{"name": "a", "description": "d", "body": "é" * 8_193}]}, "briefs[0].body"),
        ({"name": "x", "memories": [{"file": "---\nname: a\n"}]}, "memories[0].file"),
        ({"name": "x", "profiles": {"codex": {"settings": {"tools": "Read"}}}}, "settings.tools"),
    ):
        text = await refused(agent, "import_agent", arguments)
        assert field in text, text
