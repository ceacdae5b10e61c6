"""Issue 15, "Hostile input, round two": every name is one plain line, every value is checked before it reaches a
header, a parser or a log, every error repeats input capped, and an internal error's ref is in the log.

Each section names the issue's item. The walks (every name field of every action; every regular expression of
the package) take their lists from the code, so a new field or pattern is covered without touching this file.
"""

import ast
import base64
import importlib
import json
import pkgutil
import re
from collections.abc import Callable
from typing import Any, get_args, get_origin
from urllib.parse import quote

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel

import agent_workspace
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import AttachmentIn, attachment_uri, link_segment
from agent_workspace.local.stack import Seed
from agent_workspace.mcp_server.dispatch import HELP_TOOL
from agent_workspace.services import accounts, events, tasks
from agent_workspace.tools import REGISTRY
from agent_workspace.tools.agent import PERSON_ONLY
from tests.support import (
    CREATED,
    DOC,
    EVENT,
    QUESTION,
    ROOT,
    SESSION,
    TASK,
    b64,
    call,
    download_presigned,
    file_in,
    furnish,
    mcp_client,
    resolved,
    text_of,
)

pytestmark = pytest.mark.anyio

PACKAGE = ROOT / "layers" / "workspace" / "agent_workspace"


async def act(runtime, seeded: Seed, tool: str, action: str, /, **payload: Any) -> tuple[str, bool]:
    outcome = await call(runtime, seeded.agent_token, tool, {"action": action, "payload": payload})
    return outcome.text, outcome.is_error


def human(seeded: Seed) -> dict[str, str]:
    return {"authorization": f"Bearer {seeded.human_token}"}


# -- item 7: a trailing newline is no part of a name ----------------------------------------------------------------

# `$` matches before a final newline too, so `^[a-z]+$` with re.match takes "evil\n". pydantic's `pattern=` is
# not affected with its default engine (Rust's regex, where `$` is the end of the text; checked: "abc\n" is refused
# by Field(pattern=r"^[a-z]+$")), but is with regex_engine="python-re"; no model of ours sets that.
_RE_CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _pattern_literals() -> list[tuple[str, str]]:
    """(where, pattern) for every literal pattern given to `re` or `regex` anywhere in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            owner = node.func.value
            if node.func.attr in _RE_CALLS and isinstance(owner, ast.Name) and owner.id in ("re", "regex"):
                pattern = node.args[0]
                if isinstance(pattern, ast.JoinedStr):  # an f-string: its literal parts
                    parts = [p.value for p in pattern.values if isinstance(p, ast.Constant)]
                    pattern = ast.Constant("".join(parts))
                if isinstance(pattern, ast.Constant) and isinstance(pattern.value, str):
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno}", pattern.value))
    return found


def _anchors_at_dollar(pattern: str) -> bool:
    """Whether `pattern` uses `$` as an anchor: outside a character class and not escaped."""
    in_class = escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            return True
    return False


def _compiled_patterns() -> list[tuple[str, str]]:
    """(where, pattern) for every compiled pattern a module of the package holds, however it was built."""
    found = []
    for module in pkgutil.walk_packages(agent_workspace.__path__, "agent_workspace."):
        if not module.name.endswith("__main__"):  # that one starts the local stack
            for name, value in vars(importlib.import_module(module.name)).items():
                if isinstance(value, re.Pattern):
                    found.append((f"{module.name}.{name}", value.pattern))
    return found


def test_no_regular_expression_of_the_package_anchors_with_a_dollar():
    patterns = [*_pattern_literals(), *_compiled_patterns()]
    assert len(patterns) >= 10, patterns  # the walk finds the patterns at all (memory, skills, events, tasks, ...)
    anchored = [where for where, pattern in patterns if _anchors_at_dollar(pattern)]
    assert anchored == [], f"use fullmatch (or \\Z) instead of $: {anchored}"


# Every string field of every action is one of three kinds. A new field fails the coverage test until it is put here.
BODIES = {
    "body", "text", "message", "content", "payload", "markdown", "comment", "faq[].q", "faq[].a", "description",
    "summary", "criteria", "criteria[]", "criteria[].note", "questions", "questions[]", "reason", "prompt", "note",
    "addendum",
}  # newlines ok  # fmt: skip
EXEMPT = {  # never stored as given
    "task.create.cronSchedule": "stored as its five fields joined by single spaces",
    "task.get.cursor": "an opaque token, decoded strictly",
    "skills.search.q": "a search query, never stored",
    "siteTools.search.q": "a search query, never stored",
    "siteTools.search.pattern": "a search filter, never stored",
    "siteTools.getDefinition.site": "looked up as the origin it normalises to",
    "siteTools.getDefinition.tool": "must equal a name the browser reported",
    "siteTools.call.site": "looked up as the origin it normalises to",
    "siteTools.call.tool": "must equal a name the browser reported",
    "siteTools.call.taskId": "siteTools need a browser; checked as task.* taskId is",
    "siteTools.call.callId": "siteTools need a browser; a base62 id like elicitationId",
    "task.elicit.requestedSchema": "an object",
    "siteTools.call.arguments": "an object the site's own schema checks",
    "board.project.projectId": "a base62 id: anything else is not found before a key is built",
    "board.epic.epicId": "a base62 id: anything else is not found before a key is built",
    "task.list.query": "a search query, never stored",
    "task.list.cursor": "an opaque token, decoded strictly",
    "task.search.query": "a search query, never stored",
    **{
        f"task.{action}.taskId": "resolved as task.show's taskId (walked): an id or WS-<n>, else not found"
        for action in (
            *("claim", "progress", "complete", "reportBlocker", "release"),
            *("link", "unlink", "archive", "suggest"),
        )
    },
    "task.link.otherTaskId": "resolved as task.show's taskId (walked)",
    "task.link.type": "one of three literals, refused otherwise by the payload model",
    "task.unlink.otherTaskId": "resolved as task.show's taskId (walked)",
    "task.unlink.type": "one of three literals, refused otherwise by the payload model",
    "task.propose.labels": "a list: each label is walked as labels[]",
    "task.edit.labels": "a list: each label is walked as labels[]",
    **{
        f"task.{action}.{field}": "must be an id of one of the board's own projects, epics or cycles: else refused"
        for action in ("propose", "edit")
        for field in ("projectId", "epicId", "cycleId")
    },
    "task.edit.parentId": "resolved as task.show's taskId (walked); the world's one task cannot parent itself",
    "task.next.projectId": "must be the id of one of the board's own projects: else refused; never stored",
    "agent.promptVersions.cursor": "an opaque token, decoded strictly",
    "agent.update.slug": "refused on MCP whatever it is: the @handle is the owner's to change",
    "agent.create.profile": "a map: each setting is walked as profile.<setting>",
    "agent.setProfile.settings": "a map: each setting is walked as settings.<setting>",
    "agent.recall.query": "a search query, never stored",
    "agent.recall.cursor": "an opaque token, decoded strictly",
    "agent.activity.cursor": "an opaque token, decoded strictly",
    "agent.forget.id": "looked up as a memory's id; the call gives name instead",
    "agent.import.subagent": "a file's content, read by the bounded frontmatter reader (tests/unit/test_agent_bundle)",
    **{
        f"agent.import.{field}": "objects whose names pass remember's, updateBrief's and setProfile's own checks "
        "(test_agent_briefs_mcp)"
        for field in ("profiles", "memories", "briefs")
    },
    **{f"agent.{action}.agent": "refused whatever it is: the person's decision" for action in PERSON_ONLY},
}
# A call of each action that succeeds in the world (`furnish`); each of its name fields gets a trailing newline in turn.
VALID: dict[str, dict[str, Any]] = {
    "task.create": {
        "title": "Ship",
        "body": "Release v1.",
        "assignee": "human",
        "attachments": [file_in()],
        "cronSchedule": "30 * * * *",
        "timezone": "Europe/Berlin",
        "eventId": EVENT,
    },
    "task.get": {"taskId": TASK, "includeConversation": True},
    "task.updateStatus": {"taskId": TASK, "status": "ongoing"},
    "task.reply": {"taskId": TASK, "text": "Done.", "attachments": [file_in("reply")]},
    "task.elicit": {"taskId": TASK, "elicitationId": QUESTION, "timeoutSeconds": 1},
    "task.elicit ask": {
        "taskId": TASK,
        "message": "Approve?",
        "mode": "url",
        "url": "https://example.com/ok",
        "timeoutSeconds": 1,
    },
    "task.getAttachment": {"taskId": TASK, "attachmentId": "log", "format": "base64"},
    "memory.load": {"name": "deploys.md"},
    "memory.save": {"name": "deploys.md", "content": "# Deploys\n"},
    "memory.delete": {"name": "deploys.md"},
    "skills.search": {"q": "release"},
    "skills.load": {"uri": "skill://release-notes/templates/entry.md"},
    "skills.save": {"uri": "skill://release-notes/templates/entry.md", "content": "- entry\n"},
    "skills.delete": {"uri": "skill://release-notes/templates/entry.md"},
    "workspace.publishEvent": {
        "name": "deploy_done",
        "taskId": TASK,
        "payload": "live",
        "faq": [{"q": "Q?", "a": "A"}],
    },
    "siteTools.search": {"q": "search"},
    "pano.save": {"id": DOC, "title": "Plan", "markdown": "[log](deploy.log)", "color": "green", "files": [file_in()]},
    "pano.read": {"id": DOC, "includeComments": True},
    "pano.comment": {"id": DOC, "comment": "Done."},
    "pano.attach": {"id": DOC, "files": [file_in("notes", "notes.txt")]},
    "pano.delete": {"id": DOC},
    "board.createProject": {"title": "Billing", "description": "Invoices.\n"},
    "board.createEpic": {"title": "Checkout v2", "description": "New API.\n"},
    "task.list": {"status": "ready", "label": "billing", "assignee": "agent", "epicId": "0kGogHmaqvZ"},
    "task.list by cycle": {"cycleId": "0kGogHmaqvZ", "projectId": "0kGogHmaqvZ"},
    "task.show": {"taskId": TASK, "includeComments": True},
    "task.propose": {
        "title": "Ship",
        "description": "Release v1.\n",
        "summary": "All of it.\n",
        "criteria": ["released\n"],
        "complexity": "small",
        "priority": "high",
        "labels": ["release"],
        "dueDate": "2026-12-31",
        "parentId": TASK,
        "assignee": "agent",
    },
    "task.edit": {
        "taskId": TASK,
        "title": "Renamed",
        "status": "backlog",
        "labels": ["release"],
        "dueDate": "2027-01-31",
        "complexity": "large",
        "priority": "low",
        "assignee": "human",
    },
    "task.archive": {"taskId": TASK, "reason": "Done elsewhere.\n"},
    "task.comment": {"taskId": TASK, "text": "Found it.\n"},
    "task.suggest": {"taskId": TASK, "summary": "s", "criteria": ["a"]},
    "task.fetch": {"id": TASK},
    "agent.list": {"view": "mine"},
    "agent.create": {
        "name": "Reviewer",
        "slug": "reviewer",
        "description": "Reviews.\n",
        "primaryHarness": "zed",
        "profile": {"model": "fast"},
    },
    "agent.update": {"agent": "release-captain", "name": "Captain", "accent": "teal", "primaryHarness": "codex"},
    "agent.updatePrompt": {
        "agent": "release-captain",
        "body": "v2\n",
        "basedOn": 1,
        "harness": "cursor",
        "session": SESSION,
    },
    "agent.promptVersions": {"agent": "release-captain"},
    "agent.getPrompt": {"agent": "release-captain"},
    "agent.checkout": {"agent": "release-captain", "harness": "claude-code", "mode": "helper"},
    "agent.import": {
        "name": "Imported",
        "slug": "imported",
        "description": "d\n",
        "prompt": "p\n",
        "primaryHarness": "zed",
    },
    "agent.export": {"agent": "release-captain"},
    "agent.load": {"agent": "release-captain", "harness": "claude-code", "workspace": "/work/website"},
    "agent.recall": {
        "agent": "release-captain",
        "name": "release-checklist",
        "type": "project",
        "writtenBy": "agent",
        "sort": "name",
    },
    "agent.remember": {
        "agent": "release-captain",
        "session": SESSION,
        "name": "release-checklist",
        "mode": "update",
        "type": "user",
        "description": "Steps",
        "body": "Smoke.\n",
        "expectedRevision": 1,
    },
    "agent.forget": {"agent": "release-captain", "session": SESSION, "name": "release-checklist", "reason": "old\n"},
    "agent.activity": {"agent": "release-captain", "kind": "memory"},
    "agent.profiles": {"agent": "release-captain"},
    "agent.setProfile": {
        "agent": "release-captain",
        "harness": "codex",
        "settings": {"model": "gpt-5"},
        "addendum": "Use make.\n",
        "session": SESSION,
    },
    "agent.deleteProfile": {"agent": "release-captain", "harness": "cursor"},
    "agent.briefs": {"agent": "release-captain"},
    "agent.getBrief": {"agent": "release-captain", "name": "deploy"},
    "agent.updateBrief": {
        "agent": "release-captain",
        "session": SESSION,
        "name": "deploy",
        "body": "make ship\n",
        "description": "How",
        "expectedRevision": 1,
        "note": "renamed target\n",
    },
    "agent.renameBrief": {"agent": "release-captain", "session": SESSION, "name": "deploy", "newName": "deploying"},
}


def _string_fields(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Field paths of every string (or string literal) a model takes, `files[].id` for a list of models."""
    found: set[str] = set()
    for name, info in model.model_fields.items():
        stack = [info.annotation]
        while stack:
            annotation = stack.pop()
            origin, args = get_origin(annotation), get_args(annotation)
            if annotation is str or (origin is not None and "Literal" in repr(origin)):
                found.add(prefix + name)
            elif origin is list and isinstance(args[0], type) and issubclass(args[0], BaseModel):
                found |= _string_fields(args[0], f"{prefix}{name}[].")
            elif origin is dict:
                found.add(prefix + name)
            else:
                stack.extend(args)
    return found


def leaves(payload: Any, path: str = "") -> list[tuple[tuple[Any, ...], str]]:
    """(where in the payload, field path) of every string in it."""
    if isinstance(payload, str):
        return [((), path)]
    if not isinstance(payload, dict | list):
        return []
    items = payload.items() if isinstance(payload, dict) else enumerate(payload)
    found = []
    for key, value in items:
        inner = f"{path}.{key}" if isinstance(key, str) and path else (key if isinstance(key, str) else f"{path}[]")
        found += [((key, *where), field) for where, field in leaves(value, inner)]
    return found


def changed(payload: Any, where: tuple[Any, ...], change: Callable[[str], str]) -> Any:
    """A copy of `payload` with the string at `where` changed."""
    copied = json.loads(json.dumps(payload))
    holder = copied
    for key in where[:-1]:
        holder = holder[key]
    holder[where[-1]] = change(holder[where[-1]])
    return copied


ACTIONS = sorted({key.split(" ")[0] for key in VALID} | {f"{t.name}.{a.name}" for t in REGISTRY for a in t.actions})


@pytest.mark.parametrize("action", ACTIONS)
def test_every_string_field_of_every_action_is_walked_or_exempt_with_a_reason(action):
    tool_name, action_name = action.split(".")
    model = REGISTRY.tool(tool_name).action(action_name).payload
    walked = {field for key, payload in VALID.items() if key.split(" ")[0] == action for _, field in leaves(payload)}
    unclassified = {
        field
        for field in _string_fields(model)
        if field not in walked and field not in BODIES and f"{action}.{field}" not in EXEMPT
    }
    assert unclassified == set(), f"{sorted(unclassified)}: put a valid value in VALID, or say in EXEMPT why not"


@pytest.fixture
async def world(runtime, seeded) -> dict[str, str]:
    return await furnish(runtime, seeded)


@pytest.mark.parametrize("case", sorted(VALID))
async def test_every_name_field_refuses_a_trailing_newline_and_the_call_without_it_succeeds(
    runtime, seeded, world, case
):
    action = case.split(" ")[0]
    tool, action_name = action.split(".")
    payload = resolved(VALID[case], world)
    for where, field in leaves(VALID[case]):
        if field in BODIES or f"{action}.{field}" in EXEMPT:
            continue
        with_newline = changed(payload, where, lambda value: value + "\n")
        text, is_error = await act(runtime, seeded, tool, action_name, **with_newline)
        assert is_error, f"{action} stored {field} with a trailing newline: {text}"
        assert "internal error" not in text, text
    text, is_error = await act(runtime, seeded, tool, action_name, **payload)
    assert not is_error, f"the valid call itself failed, so the refusals above prove nothing: {text}"


@pytest.mark.parametrize(
    ("tool", "payload", "field"),
    [
        ("memory", {"name": "notes.md\n", "content": "x"}, "name"),
        ("skills", {"uri": "skill://evil\n/SKILL.md", "content": "---\ndescription: d\n---\n"}, "skill names"),
        ("skills", {"uri": "skill://release-notes/..\n", "content": "x"}, "the path after the skill's name"),
        ("skills", {"uri": "skill://release-notes/a\n/b.md", "content": "x"}, "the path after the skill's name"),
    ],
)
async def test_the_issues_names_with_a_newline_are_refused_and_nothing_is_stored(runtime, seeded, tool, payload, field):
    text, is_error = await act(runtime, seeded, tool, "save", **payload)
    assert is_error and field in text, text
    listed, _ = await act(runtime, seeded, "skills", "search")
    assert "evil" not in listed
    loaded, _ = await act(runtime, seeded, "memory", "load", name="notes.md")
    assert "nothing" in loaded.lower(), loaded


# -- item 13: attachment ids are any string (AgentRQ), carried percent-encoded; no control or bidi characters ----

REFUSED_IDS = ["", "a" * 129, "a\nb", "tab\t", "\x00", "\x7f", "\x85", "report\u202efdp.exe", "\u2028", "\ud800"]
# Round two refused all but URL-segment characters: AgentRQ's id is "any string".
ANY_IDS = ["schema v2 (final).sql", "a/b", ".", "..", "a b", "a?b", "a#b", "%2e%2e", "a\\b", "ü", "~x", " ", "A" * 128]


@pytest.mark.parametrize("ident", REFUSED_IDS)
async def test_attachment_ids_with_control_characters_or_past_the_bound_are_refused_naming_the_field(
    runtime, seeded, ident
):
    text, is_error = await act(runtime, seeded, "task", "create", title="t", body="b", attachments=[file_in(ident)])
    assert is_error and text.startswith("task create: attachments[0].id must be 1-128 characters"), text
    doc, _ = await act(runtime, seeded, "pano", "save", title="t", markdown="m")
    text, is_error = await act(runtime, seeded, "pano", "attach", id=json.loads(doc)["id"], files=[file_in(ident)])
    assert is_error and text.startswith("pano attach: files[0].id must be"), text


@pytest.mark.parametrize("ident", ["v1.2_final-x", "...", ".hidden", "-", *ANY_IDS])
def test_every_accepted_attachment_id_downloads_over_rest_as_the_console_links_it(live, seeded, ident):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks"
    created = httpx.post(base, json={"title": "t", "body": "b", "attachments": [file_in(ident)]}, headers=human(seeded))
    assert created.status_code == 201, created.text
    task_id = created.json()["id"]
    # the console builds the link with linkSegment: encodeURIComponent, and dots of a dot-only segment encoded too
    fetched = httpx.get(f"{base}/{task_id}/attachments/{link_segment(ident)}?format=base64", headers=human(seeded))
    assert fetched.status_code == 200 and fetched.json()["id"] == ident, fetched.text


@pytest.mark.parametrize("ident", ANY_IDS)
async def test_any_string_attachment_id_is_read_by_get_attachment_and_as_a_task_resource(live, seeded, ident):
    async with mcp_client(live.url, seeded.agent_token) as client:
        made = await client.call_tool("task", {"action": "create", "payload": {"title": "t", "body": "b"}})
        match = CREATED.match(text_of(made))
        assert match, text_of(made)
        task_id = match.group(1)
        reply = {"taskId": task_id, "text": "r", "attachments": [file_in(ident)]}
        replied = await client.call_tool("task", {"action": "reply", "payload": reply})
        assert not replied.is_error, text_of(replied)
        wanted = {"taskId": task_id, "attachmentId": ident, "format": "base64"}
        got = await client.call_tool("task", {"action": "getAttachment", "payload": wanted})
        assert not got.is_error and json.loads(text_of(got))["id"] == ident, text_of(got)
        read = (await client.read_resource(attachment_uri(task_id, ident))).contents[0]
        assert base64.b64decode(read.blob) == b"ok", read


def test_an_attachment_id_that_looks_like_key_structure_is_stored_apart_from_the_task_s_other_items(runtime, seeded):
    """Ids holding '#', '~' or the conversation's own markers get a derived key: a record never lands among, or
    shadows, another item of the task."""
    actor = Actor("agent", seeded.account_id, seeded.workspace_id, "0kGogHmaqvZ")
    made = tasks.create_task(runtime, actor, tasks.NewTask("t", "b"))
    tricky = ["#MSG#0", "x#ATT#y", "~", "~x", "MSG#~"]
    files = [AttachmentIn(id=i, filename="f", mimeType="text/plain", data=b64(b"ok")) for i in tricky]
    tasks.post_message(runtime, actor, made.id, "m", files)
    for ident in tricky:
        assert tasks.attachment(runtime, seeded.workspace_id, made.id, ident, as_base64=True)["data"] == b64(b"ok")
    _, messages, _ = runtime.tasks.get_with_conversation(seeded.workspace_id, made.id, 50, None)
    assert [m.text for m in messages] == ["m"]


# C0 and C1 controls, DEL, every Bidi_Control character, the line and paragraph separators.
UNSAFE = [
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9f",
    "\u061c",
    "\u200e",
    "\u200f",
    "\u2028",
    "\u2029",
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
]


# Where an agent names or titles something: (tool, action, payload with the name, the error's start).
AGENT_NAMES = {
    "task title": ("task", "create", lambda v: {"title": v, "body": "b"}, "task create: title"),
    "pano title": ("pano", "save", lambda v: {"title": v, "markdown": "m"}, "pano save: title"),
    "attachment filename": (
        "task",
        "create",
        lambda v: {"title": "t", "body": "b", "attachments": [file_in(filename=v)]},
        "task create: attachments[0].filename",
    ),
    "pano filename": (
        "pano",
        "save",
        lambda v: {"title": "t", "markdown": f"[x]({v})", "files": [file_in(filename=v)]},
        "pano save: files[0].filename",
    ),
}


@pytest.mark.parametrize("name", sorted(AGENT_NAMES))
async def test_names_and_titles_from_agents_refuse_control_and_bidi_characters_naming_the_field(runtime, seeded, name):
    tool, action, payload, field = AGENT_NAMES[name]
    for char in UNSAFE:
        text, is_error = await act(runtime, seeded, tool, action, **payload(f"report{char}fdp.exe"))
        expected = f"{field} must be one line of plain text: U+{ord(char):04X} at character 6 is a control"
        assert is_error and text.startswith(expected), (char, text)
    assert (await call(runtime, seeded.agent_token, "task", {"action": "get"})).text == "null", "no task was made"
    assert runtime.pano.list_docs(seeded.account_id) == [], "no doc was made"


def test_titles_from_the_human_refuse_control_and_bidi_characters_naming_the_field(live, runtime, seeded):
    event = events.define_event(runtime, seeded.account_id, "deploy_done", "A deploy finished.")
    subscriptions = f"{live.url}/api/workspaces/{seeded.workspace_id}/subscriptions"
    for char in UNSAFE:
        for url, body in [
            (f"{live.url}/api/workspaces", {"title": f"a{char}b"}),
            (subscriptions, {"eventId": event.id, "title": f"a{char}b", "body": "b"}),
            (f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks", {"title": f"a{char}b", "body": "b"}),
        ]:
            answer = httpx.post(url, json=body, headers=human(seeded))
            assert answer.status_code == 422, (char, url, answer.text)
            assert answer.json()["detail"].startswith(f"title must be one line of plain text: U+{ord(char):04X}")
    with pytest.raises(PayloadError, match="title must be one line"):
        accounts.create_account(runtime.accounts, "Acme\u202e")


async def test_plain_titles_in_any_script_and_with_emoji_are_kept(runtime, seeded):
    title = "Release שחרור إصدار 👩\u200d💻 v2"  # zero-width joiner in the emoji: not a control
    created, is_error = await act(
        runtime, seeded, "task", "create", title=title, body="b", attachments=[file_in(filename="👩\u200d💻 notes.txt")]
    )
    assert not is_error, created
    shown = await call(runtime, seeded.agent_token, "task", {"action": "get"})
    assert json.loads(shown.text)["title"] == title


# -- item 8: values checked before a header, a parser or a log --------------------------------------------------


@pytest.mark.parametrize(
    "mime",
    [
        "text/plain\r\nX-Evil: 1",
        "text/plain\n",
        "text/plain\r",
        "text/pl\x00ain",
        'text/plain; charset="a\r\nb"',
        "text/plain\u2028",
        "text",
        "text/ plain",
    ],
)
async def test_mime_types_that_could_not_be_a_header_are_refused_naming_the_field_never_logged(
    runtime, seeded, logged, mime
):
    text, is_error = await act(runtime, seeded, "task", "create", title="t", body="b", attachments=[file_in(mime=mime)])
    assert (is_error, text) == (True, "task create: attachments[0].mimeType must be a MIME type such as 'text/plain'")
    stored = runtime.clients.s3.list_objects_v2(Bucket=runtime.settings.attachments_bucket).get("Contents", [])
    assert stored == []
    assert '"level":"ERROR"' not in logged.getvalue() and "X-Evil" not in logged.getvalue()


def test_rest_refuses_a_mime_type_with_a_line_break_with_422_naming_the_field(live, seeded):
    body = {"title": "t", "body": "b", "attachments": [file_in(mime="text/plain\r\nX-Evil: 1")]}
    answer = httpx.post(f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks", json=body, headers=human(seeded))
    assert answer.status_code == 422 and "attachments[0].mimeType" in answer.json()["detail"], answer.text


async def test_a_mime_type_with_parameters_is_kept_and_served_as_the_content_type(runtime, seeded):
    mime = 'text/plain; charset=utf-8; name="a;b"'
    await act(runtime, seeded, "task", "create", title="t", body="b", attachments=[file_in(mime=mime)])
    task = json.loads((await call(runtime, seeded.agent_token, "task", {"action": "get"})).text)
    got, _ = await act(runtime, seeded, "task", "getAttachment", taskId=task["id"], attachmentId="log")
    assert download_presigned(json.loads(got)["url"]).headers["content-type"] == mime


async def test_a_filename_reaches_content_disposition_only_percent_encoded(runtime, seeded):
    filename = 'résumé "final"; x=1 %0d%0a.txt'
    await act(runtime, seeded, "task", "create", title="t", body="b", attachments=[file_in(filename=filename)])
    task = json.loads((await call(runtime, seeded.agent_token, "task", {"action": "get"})).text)
    got, _ = await act(runtime, seeded, "task", "getAttachment", taskId=task["id"], attachmentId="log")
    disposition = download_presigned(json.loads(got)["url"]).headers["content-disposition"]
    assert disposition == f"attachment; filename*=UTF-8''{quote(filename, safe='')}"


def _nested(depth: int, opening: str, closing: str) -> str:
    return opening * depth + closing * depth


@pytest.mark.parametrize(
    ("frontmatter", "expected"),
    [
        (f"description: {_nested(5000, '[', ']')}", "the frontmatter is not valid YAML (line 2): it nests deeper"),
        (f"meta: {_nested(5000, '{a: ', '}')}\ndescription: d", "it nests deeper than 32 levels"),
        ("".join(f"{' ' * i}k{i}:\n" for i in range(200)) + "description: d", "it nests deeper than 32 levels"),
        ("description: 2024-13-45", "a date or number that cannot be read"),
        (f"description: {'9' * 5000}", "a date or number that cannot be read"),
    ],
)
async def test_a_skill_md_frontmatter_too_deep_or_unreadable_is_refused_naming_content(
    runtime, seeded, frontmatter, expected
):
    content = f"---\n{frontmatter}\n---\n# Skill\n"
    text, is_error = await act(runtime, seeded, "skills", "save", uri="skill://deep/SKILL.md", content=content)
    assert is_error and text.startswith("skills save: content: ") and expected in text, text[:500]


async def test_a_frontmatter_nested_a_few_levels_is_still_read(runtime, seeded):
    content = "---\ndescription: Deep enough.\nmetadata: {a: {b: [1, [2, {c: d}]]}}\n---\n# Skill\n"
    text, is_error = await act(runtime, seeded, "skills", "save", uri="skill://deep/SKILL.md", content=content)
    assert not is_error, text


# -- item 15: the ref an agent reports is in the log -------------------------------------------------------------


def _crash_workspace_get(monkeypatch) -> None:
    def crash(*args: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("agent_workspace.tools.workspace.workspace_of", crash)


def _records(logged) -> list[dict[str, Any]]:
    return [json.loads(line) for line in logged.getvalue().splitlines() if line.startswith("{")]


def _ref_in(text: str) -> str:
    match = re.search(r"report ref (\S+) if it persists", text)
    assert match, text
    return match.group(1)


async def test_under_uvicorn_the_ref_of_an_internal_error_is_in_its_log_record(live, seeded, logged, monkeypatch):
    _crash_workspace_get(monkeypatch)
    async with mcp_client(live.url, seeded.agent_token) as client:
        result = await client.call_tool("workspace", {"action": "get"})
    ref = _ref_in(text_of(result))
    assert ref != "unknown"
    failures = [r for r in _records(logged) if r.get("message") == "tool action failed"]
    assert [r.get("ref") for r in failures] == [ref], logged.getvalue()[-2000:]


def test_on_lambda_the_ref_of_an_internal_error_is_the_request_id_in_its_log_record(
    runtime, seeded, logged, monkeypatch
):
    from tests.integration.test_lambda_handler import Lambda, load_event, result_of
    from tests.support import load_function

    aws_lambda = Lambda(load_function("api", runtime, monkeypatch).handler)
    _crash_workspace_get(monkeypatch)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "workspace", "arguments": {"action": "get"}},
    }
    for _ in range(2):  # warm start too
        reply = aws_lambda.invoke(load_event("mcp_tools_call_help.json", seeded.agent_token, body))
        ref = _ref_in(result_of(reply)["content"][0]["text"])
        failure = [r for r in _records(logged) if r.get("message") == "tool action failed"][-1]
        assert failure["ref"] == ref == failure["function_request_id"], failure


async def test_an_internal_error_of_a_resource_read_is_a_json_rpc_error_with_the_ref_in_its_log_record(
    live, seeded, logged, monkeypatch
):
    def crash(*args: Any) -> None:
        raise RuntimeError("boom: a secret in a stack trace")

    monkeypatch.setattr("agent_workspace.services.memory.get", crash)
    async with mcp_client(live.url, seeded.agent_token) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("memory://deploys.md")
    assert raised.value.code == INTERNAL_ERROR and "boom" not in raised.value.message, raised.value.message
    ref = _ref_in(raised.value.message)
    failures = [r for r in _records(logged) if r.get("message") == "resource request failed"]
    assert [(r.get("ref"), r.get("method")) for r in failures] == [(ref, "resources/read")], logged.getvalue()[-2000:]


# -- item 16: errors repeat input capped --------------------------------------------------------------------------

HUGE = "x" * 4_000_000
CAPPED = f"{'x' * 100}…(4,000,000 characters)"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (HUGE, {"action": "get"}),
        ("memory", {"action": HUGE}),
        ("memory", {"action": "save", "payload": {HUGE: 1, "content": "c"}}),
        ("memory", {"action": "save", "payload": {"name": HUGE, "content": "c"}}),
        ("memory", {"action": "save", "payload": {"content": "c"}, HUGE: 1}),
        ("task", {"action": "create", "payload": {"title": "t", "body": "b", "cronSchedule": HUGE}}),
        (
            "task",
            {
                "action": "create",
                "payload": {"title": "t", "body": "b", "cronSchedule": "30 * * * *", "timezone": HUGE},
            },
        ),
        ("task", {"action": "get", "payload": {"taskId": HUGE}}),
        ("task", {"action": "getAttachment", "payload": {"taskId": TASK, "attachmentId": HUGE}}),
        ("task", {"action": "help", "payload": {"topic": HUGE}}),
        (HELP_TOOL, {"action": HUGE}),
        (HELP_TOOL, {"action": f"task.{HUGE}"}),
        ("workspace", {"action": "publishEvent", "payload": {"name": HUGE, "payload": "p"}}),
        ("skills", {"action": "load", "payload": {"uri": f"skill://{HUGE}"}}),
    ],
)
async def test_a_4_mb_name_or_value_comes_back_capped_in_the_error(runtime, seeded, world, tool, arguments):
    outcome = await call(runtime, seeded.agent_token, tool, resolved(arguments, world))
    assert outcome.is_error and "internal error" not in outcome.text, outcome.text[:300]
    assert len(outcome.text) < 1000 and re.search(r"…\(4,000,0\d\d characters\)", outcome.text), outcome.text[:1500]


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("resources/read", {"uri": HUGE}),
        ("resources/read", {"uri": f"skill://{HUGE}"}),
        ("resources/read", {"uri": f"memory://{HUGE[:1000]}"}),
        ("resources/read", {"uri": f"task://{HUGE[:500]}/attachments/{HUGE[:500]}"}),
        ("resources/list", {"cursor": HUGE}),
        ("skills/list", {"cursor": HUGE}),
        ("skills/get", {"uri": HUGE}),
        ("skills/get", {"uri": f"skill://a/{HUGE[:1000]}"}),
    ],
)
def test_the_resource_methods_answer_4_mb_input_with_a_short_invalid_params_error(live, seeded, method, params):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    answer = httpx.post(f"{live.url}/mcp", json=body, headers={**human(seeded), **headers}, timeout=60)
    assert answer.status_code == 403  # a human token never reaches a method
    headers["authorization"] = f"Bearer {seeded.agent_token}"
    answer = httpx.post(f"{live.url}/mcp", json=body, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text[:300]
    error = answer.json()["error"]
    assert error["code"] == INVALID_PARAMS and error["message"].startswith(f"{method}: "), error
    assert len(answer.text) < 1000 and "internal error" not in answer.text, answer.text[:1500]


def test_rest_problem_details_repeat_a_4_mb_field_name_or_value_capped(live, seeded):
    workspaces = f"{live.url}/api/workspaces"
    for body in ({"title": "t", HUGE: 1}, {"title": HUGE}, {HUGE: 1}):
        answer = httpx.post(workspaces, json=body, headers=human(seeded), timeout=60)
        assert answer.status_code == 422, answer.text[:300]
        assert len(answer.text) < 1500, answer.text[:1500]
    path = "/api/" + "y" * 8000
    answer = httpx.get(f"{live.url}{path}", headers=human(seeded))
    assert answer.status_code == 404 and answer.json()["detail"] == f"no route /api/{'y' * 95}…(8,005 characters)"
    for path in [f"/api/workspaces/{'y' * 8000}", f"/api/workspaces/{seeded.workspace_id}/skills/{'y' * 8000}"]:
        answer = httpx.get(f"{live.url}{path}", headers=human(seeded))
        assert answer.status_code in (404, 422) and "…(8,000 characters)" in answer.json()["detail"], answer.text[:300]
        assert len(answer.text) < 500, answer.text[:1000]
