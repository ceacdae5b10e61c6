"""The agent-facing surface, pinned: any change to tools/list or a help text must be deliberate.

Regenerate after an intended change with `UPDATE_SNAPSHOTS=1 make test` and review the diff.
"""

import json
import os
from pathlib import Path

import pytest

from agent_workspace.mcp_server.dispatch import answer_help
from agent_workspace.mcp_server.server import INSTRUCTIONS, listed_tools
from agent_workspace.mcp_server.surfaces import SURFACES, WORKSPACE, Surface
from agent_workspace.tools import REGISTRY

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _check(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"no snapshot {name}; run with UPDATE_SNAPSHOTS=1 once and review it"
    assert actual == path.read_text(encoding="utf-8")


def _listing(surface: Surface) -> list[dict]:
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed_tools(REGISTRY, surface)]


def test_tools_list_matches_the_snapshot():
    _check("tools_list.json", json.dumps(_listing(WORKSPACE), indent=2, ensure_ascii=False) + "\n")


@pytest.mark.parametrize("surface", [s for s in SURFACES if s is not WORKSPACE], ids=lambda s: s.name)
def test_each_reference_paths_tools_list_matches_its_snapshot(surface):
    _check(f"tools_list_{surface.name}.json", json.dumps(_listing(surface), indent=2, ensure_ascii=False) + "\n")


def test_the_size_of_each_paths_tools_list_is_pinned():
    """What a client puts into the model's context on connecting, per path (compact JSON, as sent): a change in
    these figures is a change in every agent's context, made on purpose."""
    sizes = {}
    for surface in SURFACES:
        tools = _listing(surface)
        sizes[surface.path] = {
            "tools": len(tools),
            "bytes": len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode()),
            "inputSchemaBytes": sum(len(json.dumps(t["inputSchema"], separators=(",", ":"))) for t in tools),
            "outputSchemaBytes": sum(len(json.dumps(t.get("outputSchema", {}), separators=(",", ":"))) for t in tools),
        }
    _check("tools_list_sizes.json", json.dumps(sizes, indent=2) + "\n")
    assert [sizes[s.path]["tools"] for s in SURFACES] == [9, 7, 19, 21]


def _all_help_topics() -> list[str]:
    topics = [""]
    for tool in REGISTRY:
        topics.append(tool.name)
        topics += [f"{tool.name}.{action.name}" for action in tool.actions]
    return topics


def test_help_texts_match_the_snapshot():
    sections = []
    for topic in _all_help_topics():
        call = f'help {{"action": "{topic}"}}' if topic else "help {}"
        sections.append(f"// {call}\n{answer_help(REGISTRY, {'action': topic} if topic else {})}\n")
    _check("help.txt", "\n".join(sections))


def test_help_overview_lists_only_served_tools_in_the_reference_layout():
    assert answer_help(REGISTRY, {}) == "\n".join(
        [
            'Every tool takes {"action": "<action>", "payload": {...}}.',
            "",
            "Tools:",
            "  task         This workspace's tasks, and talking to the human in them.",
            "               actions: create, get, updateStatus, reply, elicit, getAttachment, list, show, next,",
            "                        claim, progress, complete, reportBlocker, release, propose, edit, archive,",
            "                        link, unlink, comment, suggest, search, fetch",
            "  memory       Notes that outlive a task, shared by every agent here.",
            "               actions: load, save, delete",
            "  skills       The skills this workspace can use.",
            "               actions: search, load, save, delete",
            "  workspace    This workspace, and publishing its events.",
            "               actions: get, publishEvent",
            "  siteTools    Websites the human shared from Chrome, and their tools.",
            "               actions: search, getDefinition, call",
            "  pano         Markdown docs every workspace of the account shares.",
            "               actions: save, read, comment, attach, delete",
            "  board        The task board's workspace level: its columns and vocabularies, projects and epics.",
            "               actions: context, project, epic, createProject, createEpic",
            "  agent        The account's agents: an @handle, a versioned prompt, memory and briefs that follow you to "
            "any tool.",
            "               actions: list, create, update, updatePrompt, promptVersions, getPrompt, load, recall,",
            "                        remember, forget, activity, profiles, setProfile, deleteProfile, briefs,",
            "                        getBrief, updateBrief, renameBrief, checkout, import, export, share, accept,",
            "                        transfer, archive, delete, lockPrompt, mintCredential, pinMemory,",
            "                        restoreMemory, restorePromptVersion, deleteBrief",
            "",
            'Run help {"action": "<tool>"} for a tool\'s actions, or {"action": "<tool>.<action>"} for one '
            "action's payload and an example.",
        ]
    )


@pytest.mark.parametrize("tool", [t.name for t in REGISTRY])
def test_every_listed_tool_takes_action_and_payload_and_is_described(tool):
    listed = {t.name: t for t in listed_tools(REGISTRY)}[tool]
    schema = listed.input_schema
    assert schema["required"] == ["action"]
    assert schema["properties"]["payload"]["type"] == "object"
    assert "help" in schema["properties"]["action"]["enum"]
    assert listed.description and listed.annotations is not None


def test_instructions_tell_an_agent_how_to_start_in_under_1024_characters():
    assert len(INSTRUCTIONS) < 1024
    for step in ('workspace {"action": "get"}', 'memory {"action": "load"}', 'task {"action": "get"}'):
        assert step in INSTRUCTIONS


def test_old_tool_names_are_never_listed():
    from agent_workspace.mcp_server.legacy import OLD_TOOL_NAMES

    assert {t.name for t in listed_tools(REGISTRY)}.isdisjoint(OLD_TOOL_NAMES)


# What the listing may take, compact JSON. A client puts the tools' names, descriptions and input schemas in
# the model's context at every turn; output schemas are for the client to check answers with. Field
# descriptions stay in `help`, so the input schemas carry names, types, enums and bounds only.
CONTEXT_BUDGET = 36 * 1024  # 32.5 KB today; 14.7 KB before the input schemas showed payload fields
LISTING_BUDGET = 72 * 1024  # 67 KB today, output schemas included


def test_the_listing_stays_small():
    tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed_tools(REGISTRY)]
    seen_by_the_model = [{k: v for k, v in t.items() if k != "outputSchema"} for t in tools]

    assert len(json.dumps(seen_by_the_model, separators=(",", ":"))) <= CONTEXT_BUDGET
    assert len(json.dumps(tools, separators=(",", ":"))) <= LISTING_BUDGET
