"""The Claude Code channel (channel/, the console script `agent-workspace-channel`) end to end: spawned over stdio by
the SDK's client the way Claude Code spawns it, against the app under uvicorn, with the human acting over REST.

Claude Code's channel messages are extensions of MCP, so the client here listens for them as an extension's
notification bindings and sends `permission_request` as Claude Code does.
"""

import base64
import json
import shutil
import sys
import threading
import time
import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx
import mcp_types as types
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClientExtension, NotificationBinding
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from packaging.requirements import Requirement
from pydantic import BaseModel, ConfigDict, TypeAdapter

from agent_workspace.api.app import create_app
from agent_workspace.local.__main__ import _claude_code_setup
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel as channel_service
from agent_workspace.services import memory, pano, skills
from tests.support import DOC, ROOT, TASK, TOOL_NAMES, bearer, file_in, free_port, furnish, mcp_client, text_of

REQUIREMENTS = ROOT / "layers" / "workspace" / "requirements.txt"

pytestmark = pytest.mark.anyio

CHANNEL = "notifications/claude/channel"
VERDICT = "notifications/claude/channel/permission"
PERMISSION_REQUEST = "notifications/claude/channel/permission_request"
SKILLS = "io.modelcontextprotocol/skills"
RELEASE_MD = "skill://release-notes/SKILL.md"
ENTRY_MD = "skill://release-notes/templates/entry.md"
ARRIVES = 15  # seconds: a long poll reads again within 4 s of a change, so a push takes a few seconds at most


class Push(BaseModel):
    model_config = ConfigDict(extra="forbid")
    content: str
    meta: dict[str, str] = {}


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: str
    behavior: str


class ClaudeCodeNotification(BaseModel):
    """A client notification outside the spec's vocabulary, as Claude Code sends `permission_request`."""

    method: str
    params: dict[str, Any]


class Listening(ClientExtension):
    """What Claude Code hears from a channel: pushes and permission verdicts, in the order they arrive."""

    identifier = "com.anthropic/claude-channel-test"

    def __init__(self) -> None:
        self.pushes_in, self.pushes = anyio.create_memory_object_stream[Push](100)
        self.verdicts_in, self.verdicts = anyio.create_memory_object_stream[Verdict](100)
        self.changed_in, self.changed = anyio.create_memory_object_stream[object](100)
        self.resources_changed_in, self.resources_changed = anyio.create_memory_object_stream[object](100)

    async def message(self, message: object) -> None:
        """The client's message handler: spec notifications, of which the tool and resource lists' changes matter."""
        if isinstance(message, types.ToolListChangedNotification):
            await self.changed_in.send(message)
        elif isinstance(message, types.ResourceListChangedNotification):
            await self.resources_changed_in.send(message)

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        return (
            NotificationBinding(method=CHANNEL, params_type=Push, handler=self.pushes_in.send),
            NotificationBinding(method=VERDICT, params_type=Verdict, handler=self.verdicts_in.send),
        )


@dataclass
class Session:
    """A Claude Code session with the bridge as its channel."""

    client: Client
    heard: Listening

    async def push(self, seconds: float = ARRIVES) -> Push:
        with anyio.fail_after(seconds):
            return await self.heard.pushes.receive()

    async def changed(self, seconds: float = 45) -> None:
        with anyio.fail_after(seconds):  # the poll backs off while the workspace is down (at most 30 s)
            await self.heard.changed.receive()

    async def verdict(self, seconds: float = ARRIVES) -> Verdict:
        with anyio.fail_after(seconds):
            return await self.heard.verdicts.receive()

    async def ask(self, request_id: str, tool: str, description: str, preview: str) -> None:
        params = {"request_id": request_id, "tool_name": tool, "description": description, "input_preview": preview}
        await self.client.session.send_notification(ClaudeCodeNotification(method=PERMISSION_REQUEST, params=params))

    async def tool(self, name: str, action: str, /, **payload: Any) -> tuple[str, bool]:
        result = await self.client.call_tool(name, {"action": action, "payload": payload})
        return text_of(result), bool(result.is_error)


def _command() -> list[str]:
    script = Path(sys.executable).with_name("agent-workspace-channel")
    if script.exists():
        return [str(script)]
    found = shutil.which("agent-workspace-channel")
    return [found] if found else [sys.executable, "-m", "agent_workspace_channel"]


@asynccontextmanager
async def bridge(url: str, token: str, state: Path, log: TextIO, *options: str) -> AsyncIterator[Session]:
    """The bridge as Claude Code runs it: spawned with the token in its environment, probed with `server/discover`
    first (the `auto` mode), its stderr kept in `log`."""
    command = _command()
    params = StdioServerParameters(
        command=command[0],
        args=[*command[1:], "--url", f"{url}/mcp", "--state", str(state), *options],
        env={"AGENT_WORKSPACE_TOKEN": token, "PYTHONPATH": str(ROOT / "channel")},  # this checkout's bridge
    )
    heard = Listening()
    transport = stdio_client(params, errlog=log)
    async with Client(transport, mode="auto", extensions=[heard], message_handler=heard.message) as client:
        yield Session(client, heard)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state" / "cursor.json"


@pytest.fixture
def log(tmp_path: Path) -> Iterator[TextIO]:
    with open(tmp_path / "bridge.log", "w+") as file:
        yield file


@pytest.fixture
def human(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


def created(human: httpx.Client, title: str, body: str = "", **more: Any) -> str:
    response = human.post("/tasks", json={"title": title, "body": body, **more})
    assert response.status_code == 201, response.text
    return response.json()["id"]


async def eventually(check: Callable[[], Awaitable[Any] | Any], seconds: float = ARRIVES) -> Any:
    """`check()`'s first truthy answer, asked every 0.2 s for at most `seconds`."""
    with anyio.fail_after(seconds):
        while True:
            answer = check()
            if isinstance(answer, Awaitable):
                answer = await answer
            if answer:
                return answer
            await anyio.sleep(0.2)


# -- tools ---------------------------------------------------------------------------------------------------------


async def test_the_bridge_serves_the_workspaces_tools_and_declares_itself_a_channel(live, seeded, state, log):
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        client = session.client
        assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS  # discover refused: Claude Code registers it
        experimental = client.server_capabilities.experimental or {}
        assert experimental.get("claude/channel") == {} and experimental.get("claude/channel/permission") == {}
        assert 'chat_id="' in (client.instructions or "") and "taskId" in (client.instructions or "")
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == TOOL_NAMES
        text, is_error = await session.tool("workspace", "get")
        assert not is_error, text
        assert json.loads(text)["id"] == seeded.workspace_id
        text, is_error = await session.tool("task", "updateStatus", taskId="00000000000", status="ongoing")
        assert is_error and "00000000000" in text  # the workspace's own error, passed on


async def test_output_schemas_and_structured_content_pass_through_the_bridge_unchanged(live, seeded, state, log):
    async with mcp_client(live.url, seeded.agent_token) as direct:
        upstream = {tool.name: tool.output_schema for tool in (await direct.list_tools()).tools}
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        forwarded = {tool.name: tool.output_schema for tool in (await session.client.list_tools()).tools}
        result = await session.client.call_tool("workspace", {"action": "get"})
    assert forwarded == upstream and forwarded["task"]
    assert result.is_error is False and result.structured_content is not None
    assert result.structured_content["id"] == seeded.workspace_id
    assert json.loads(text_of(result)) == result.structured_content


# -- resources and skills ------------------------------------------------------------------------------------------


async def every_page(client: Client) -> list[list[str]]:
    """`resources/list` through `client`, page by page following nextCursor, each page as its URIs."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages.append([resource.uri for resource in page.resources])
        cursor = page.next_cursor
        if cursor is None or len(pages) > 20:
            return pages


async def extension(client: Client, method: str, **params: Any) -> dict[str, Any]:
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


async def test_the_bridge_lists_every_resource_page_by_page_and_reads_one_of_each_kind(
    live, runtime, seeded, state, log, monkeypatch
):
    ids = await furnish(runtime, seeded)
    for service in (skills, memory, pano):
        monkeypatch.setattr(service, "RESOURCE_PAGE", 1)  # a page per resource: the bridge must pass the cursors on
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        client = session.client
        assert client.server_capabilities.resources is not None
        pages = await every_page(client)
        templates = (await client.list_resource_templates(cache_mode="bypass")).resource_templates
        skill_md = (await client.read_resource(RELEASE_MD, cache_mode="bypass")).contents[0]
        entry = (await client.read_resource(ENTRY_MD, cache_mode="bypass")).contents[0]
        note = (await client.read_resource("memory://deploys.md", cache_mode="bypass")).contents[0]
        doc = (await client.read_resource(f"pano://{ids[DOC]}", cache_mode="bypass")).contents[0]
        attachment = (await client.read_resource(f"task://{ids[TASK]}/attachments/log", cache_mode="bypass")).contents[
            0
        ]
    assert len(pages) > 1
    assert [uri for page in pages for uri in page] == [
        RELEASE_MD,
        ENTRY_MD,
        "memory://deploys.md",
        f"pano://{ids[DOC]}",
    ]
    assert [t.name for t in templates] == ["skill", "skill-file", "memory", "pano-doc", "task-attachment"]
    assert isinstance(skill_md, types.TextResourceContents) and "description: Notes." in skill_md.text
    assert isinstance(entry, types.TextResourceContents) and entry.text == "- entry\n"
    assert isinstance(note, types.TextResourceContents) and (note.mime_type, note.text) == (
        "text/markdown",
        "# Deploys\n",
    )
    assert isinstance(doc, types.TextResourceContents) and doc.text.startswith("# Plan")
    assert isinstance(attachment, types.BlobResourceContents)
    assert (attachment.mime_type, base64.b64decode(attachment.blob)) == ("text/plain", b"ok")


async def test_a_resource_the_workspace_refuses_arrives_as_the_workspaces_own_json_rpc_error(live, seeded, state, log):
    refusals: list[tuple[int, str]] = []
    for uri in ("memory://nope.md", "file:///etc/passwd"):
        async with mcp_client(live.url, seeded.agent_token) as direct:
            with pytest.raises(MCPError) as upstream:
                await direct.read_resource(uri)
        async with bridge(live.url, seeded.agent_token, state, log) as session:
            with pytest.raises(MCPError) as forwarded:
                await session.client.read_resource(uri, cache_mode="bypass")
            with pytest.raises(MCPError) as cursor:
                await session.client.list_resources(cursor="nope", cache_mode="bypass")
        assert (forwarded.value.code, forwarded.value.message) == (upstream.value.code, upstream.value.message)
        refusals.append((forwarded.value.code, forwarded.value.message))
    assert all(code == types.INVALID_PARAMS and text.startswith("resources/read: ") for code, text in refusals)
    assert (cursor.value.code, cursor.value.message) == (
        types.INVALID_PARAMS,
        "resources/list: cursor is not one this listing returned",
    )


async def test_the_bridge_declares_and_forwards_the_skills_extension(live, runtime, seeded, state, log):
    await furnish(runtime, seeded)
    async with mcp_client(live.url, seeded.agent_token) as direct:
        listed = await extension(direct, "skills/list")
        got = await extension(direct, "skills/get", uri=RELEASE_MD)
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        assert (session.client.server_capabilities.extensions or {}).get(SKILLS) == {}
        assert await extension(session.client, "skills/list") == listed
        assert await extension(session.client, "skills/get", uri=RELEASE_MD) == got
        with pytest.raises(MCPError) as refused:
            await extension(session.client, "skills/get", uri=ENTRY_MD)
    assert [entry["uri"] for entry in listed["skills"]] == [RELEASE_MD] and "ttlMs" not in listed
    assert refused.value.code == types.INVALID_PARAMS and refused.value.message.startswith("skills/get: ")


# -- pushes --------------------------------------------------------------------------------------------------------


async def test_a_task_the_human_creates_arrives_as_a_channel_notification_with_its_chat_id(
    live, seeded, human, state, log
):
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        task_id = created(human, "Ship the release", "Tag v1.2 and publish.", attachments=[file_in()])
        started = time.monotonic()
        push = await session.push()
        assert time.monotonic() - started < 10
        assert push.meta["chat_id"] == task_id and push.meta["kind"] == "task"
        assert push.content.startswith("Ship the release\n\nTag v1.2 and publish.")
        assert "deploy.log" in push.content  # the attachments are listed

        human.post(f"/tasks/{task_id}/messages", json={"text": "Also the release notes, please."})
        reply = await session.push()
        assert reply.meta["chat_id"] == task_id and reply.meta["kind"] == "reply"
        assert reply.content == "Also the release notes, please."
    log.seek(0)
    said = log.read()
    assert seeded.agent_token not in said and "Tag v1.2" not in said and "release notes" not in said


async def test_a_restarted_bridge_resumes_from_its_cursor_without_pushing_anything_twice(
    live, seeded, human, state, log
):
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        first = created(human, "First")
        assert (await session.push()).meta["chat_id"] == first
    second = created(human, "Second")  # while no bridge runs
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        assert (await session.push()).meta["chat_id"] == second
        third = created(human, "Third")
        assert (await session.push()).meta["chat_id"] == third  # in order: nothing of First came in between
    assert json.loads(state.read_text())["cursor"]


async def test_a_task_still_not_started_is_pushed_again_until_the_agent_starts_it(live, seeded, human, state, log):
    async with bridge(live.url, seeded.agent_token, state, log, "--repush-after", "1", "--repush-max", "3") as session:
        task_id = created(human, "Rotate the keys")
        first = await session.push()
        assert first.meta["chat_id"] == task_id and "repeat" not in first.meta
        again = await session.push()
        assert again.meta["chat_id"] == task_id and again.meta["repeat"] == "1" and again.content == first.content
        text, is_error = await session.tool("task", "updateStatus", taskId=task_id, status="ongoing")
        assert not is_error, text
        later = created(human, "Later")
        assert (await session.push()).meta["chat_id"] == later  # no third push of the started task


async def test_pushes_are_bounded(live, seeded, human, state, log):
    async with bridge(
        live.url, seeded.agent_token, state, log, "--repush-after", "0.5", "--repush-max", "1"
    ) as session:
        task_id = created(human, "Nobody starts this")
        assert (await session.push()).meta["chat_id"] == task_id
        assert (await session.push()).meta["repeat"] == "1"
        later = created(human, "Later")
        assert (await session.push()).meta["chat_id"] == later  # a second repeat would have come first (0.5 s)


# -- permission relay ----------------------------------------------------------------------------------------------


def pending_question(human: httpx.Client, request_id: str) -> dict | None:
    listed = human.get("/permissions").json()["permissions"]
    return next((q for q in listed if q["requestId"] == request_id and q["status"] == "pending"), None)


async def test_a_permission_request_round_trips_through_a_rest_approval_to_an_allow_verdict(
    live, seeded, human, state, log
):
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        task_id = created(human, "Clean up")
        await session.push()
        assert not (await session.tool("task", "updateStatus", taskId=task_id, status="ongoing"))[1]
        await session.ask("abcde", "Bash", "List the files", '{"command": "ls -la"}')
        question = await eventually(lambda: pending_question(human, "abcde"))
        assert question["toolName"] == "Bash" and question["inputPreview"] == '{"command": "ls -la"}'
        assert question["taskId"] == task_id  # the task the agent is on, as it told the workspace through the bridge
        assert human.post(f"/permissions/{question['id']}", json={"decision": "allow"}).status_code == 200
        assert await session.verdict() == Verdict(request_id="abcde", behavior="allow")

        await session.ask("fghij", "Bash", "Remove the build", '{"command": "rm -rf build"}')
        question = await eventually(lambda: pending_question(human, "fghij"))
        human.post(f"/permissions/{question['id']}", json={"decision": "deny"})
        assert await session.verdict() == Verdict(request_id="fghij", behavior="deny")


async def test_always_allow_is_answered_by_the_bridge_at_once_the_next_time(live, seeded, human, state, log):
    async with bridge(live.url, seeded.agent_token, state, log) as session:
        await session.ask("mnopq", "Write", "Write notes.md", '{"file_path": "notes.md"}')
        question = await eventually(lambda: pending_question(human, "mnopq"))
        human.post(f"/permissions/{question['id']}", json={"decision": "always"})
        assert await session.verdict() == Verdict(request_id="mnopq", behavior="allow")
        assert [rule["tool"] for rule in human.get("/permission-rules").json()["rules"]] == ["Write"]

        started = time.monotonic()
        await session.ask("rstuv", "Write", "Write todo.md", '{"file_path": "todo.md"}')
        assert await session.verdict(seconds=5) == Verdict(request_id="rstuv", behavior="allow")
        assert time.monotonic() - started < 3  # no poll in between: the workspace answered the question itself
        assert pending_question(human, "rstuv") is None


# -- over the WebSocket push ---------------------------------------------------------------------------------------


@pytest.fixture
def event_reads(monkeypatch) -> list[float]:
    """The `wait` of every GET /api/channel/events the app serves: a long poll is a read with a wait."""
    waits: list[float] = []
    real = channel_service.events

    async def recorded(rt: Runtime, actor: Any, cursor: str | None, wait: float, deadline: float | None) -> Any:
        waits.append(wait)
        return await real(rt, actor, cursor, wait, deadline)

    monkeypatch.setattr(channel_service, "events", recorded)
    return waits


@pytest.fixture
def human_of_pushing(pushing, seeded):
    base = f"{pushing.url}/api/workspaces/{seeded.workspace_id}"
    with httpx.Client(base_url=base, headers=bearer(seeded.human_token), timeout=30) as client:
        yield client


async def test_on_a_stack_with_push_the_news_arrives_over_the_websocket_with_no_long_poll_and_a_cut_loses_nothing(
    pushing, seeded, human_of_pushing, state, log, event_reads
):
    human, gateway = human_of_pushing, pushing.gateway
    assert gateway is not None
    async with bridge(pushing.url, seeded.agent_token, state, log) as session:
        first_socket = await eventually(lambda: gateway.connection_ids)
        task_id = created(human, "Ship the release", "Tag v1.2.")
        push = await session.push()
        assert (push.meta["chat_id"], push.meta["kind"]) == (task_id, "task")
        assert push.content.startswith("Ship the release")

        human.post(f"/tasks/{task_id}/messages", json={"text": "Also the notes."})
        reply = await session.push()
        assert (reply.meta["chat_id"], reply.meta["kind"], reply.content) == (task_id, "reply", "Also the notes.")

        await session.ask("abcde", "Bash", "List the files", '{"command": "ls"}')
        question = await eventually(lambda: pending_question(human, "abcde"))
        human.post(f"/permissions/{question['id']}", json={"decision": "allow"})
        assert await session.verdict() == Verdict(request_id="abcde", behavior="allow")

        assert gateway.close() == 1  # the server cuts the socket (as API Gateway does at 2 hours)
        cut = created(human, "Said while the socket was down")  # its push finds no socket, or a dying one
        assert (await session.push()).meta["chat_id"] == cut  # the new socket's catch-up from the cursor
        second_socket = await eventually(lambda: gateway.connection_ids)
        after = created(human, "After the cut")
        assert (await session.push()).meta["chat_id"] == after  # nothing of the cut came twice
    assert second_socket != first_socket
    assert event_reads and not any(event_reads)  # only reads without a wait: no long poll ran
    log.seek(0)
    said = log.read()
    assert "channel events over the WebSocket" in said and "by long poll" not in said
    assert seeded.agent_token not in said and "aw_ticket_" not in said and "Tag v1.2" not in said


# -- the workspace goes away and comes back ------------------------------------------------------------------------


class Restartable:
    """The app under uvicorn on one fixed port, stopped and started again by the test."""

    def __init__(self, runtime: Runtime) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._runtime = runtime
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        config = uvicorn.Config(
            create_app(self._runtime),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            timeout_graceful_shutdown=1,  # a long poll in flight is cut, as when a server dies
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, "uvicorn did not start within 10 s"
            time.sleep(0.01)

    def stop(self) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(timeout=10)
        assert not self._thread.is_alive()


@pytest.fixture
def restartable(runtime: Runtime):
    server = Restartable(runtime)
    server.start()
    yield server
    if server._thread is not None and server._thread.is_alive():
        server.stop()


async def test_with_the_workspace_down_the_bridge_answers_clear_tool_errors_and_recovers_when_it_is_back(
    restartable, seeded, state, log
):
    async with bridge(restartable.url, seeded.agent_token, state, log) as session:
        assert not (await session.tool("workspace", "get"))[1]
        await anyio.to_thread.run_sync(restartable.stop)

        text, is_error = await session.tool("workspace", "get")
        assert is_error and f"agent-workspace is unreachable at {restartable.url}/mcp (" in text and "retrying" in text
        tools = await session.client.list_tools()  # still the tools, from memory
        assert "task" in [t.name for t in tools.tools]

        await anyio.to_thread.run_sync(restartable.start)
        text, is_error = await eventually(lambda: _ok(session.tool("workspace", "get")))
        assert json.loads(text)["id"] == seeded.workspace_id
        with httpx.Client(
            base_url=f"{restartable.url}/api/workspaces/{seeded.workspace_id}", headers=bearer(seeded.human_token)
        ) as human:
            task_id = created(human, "After the outage")
        push = await session.push(seconds=45)  # the poll backs off while the workspace is down (at most 30 s)
        assert push.meta["chat_id"] == task_id
    log.seek(0)
    assert "unreachable" in log.read()


async def test_a_bridge_started_while_the_workspace_is_down_lists_the_tools_once_it_is_up(
    restartable, seeded, state, log
):
    restartable.stop()
    async with bridge(restartable.url, seeded.agent_token, state, log) as session:
        assert (await session.client.list_tools()).tools == []  # nothing to list yet, and no failure
        text, is_error = await session.tool("workspace", "get")
        assert is_error and "unreachable" in text
        await anyio.to_thread.run_sync(restartable.start)
        await session.changed()  # told to list again (notifications/tools/list_changed), once the workspace answers
        assert "task" in [t.name for t in (await session.client.list_tools()).tools]


async def test_with_the_workspace_down_resources_list_empty_a_read_says_so_and_the_list_changes_once_it_is_up(
    restartable, runtime, seeded, state, log
):
    await furnish(runtime, seeded)
    restartable.stop()
    async with bridge(restartable.url, seeded.agent_token, state, log) as session:
        client = session.client
        assert (await client.list_resources(cache_mode="bypass")).resources == []
        assert (await extension(client, "skills/list")) == {"skills": []}
        with pytest.raises(MCPError) as raised:
            await client.read_resource("memory://deploys.md", cache_mode="bypass")
        assert raised.value.code == types.INTERNAL_ERROR
        assert f"agent-workspace is unreachable at {restartable.url}/mcp (" in raised.value.message

        await anyio.to_thread.run_sync(restartable.start)
        with anyio.fail_after(45):  # the poll backs off while the workspace is down (at most 30 s)
            await session.heard.resources_changed.receive()
        assert "memory://deploys.md" in [uri for page in await every_page(client) for uri in page]


async def test_a_token_the_workspace_refuses_is_named_in_the_tool_error(live, seeded, state, log):
    async with bridge(live.url, "aw_agent_not-a-token-of-this-workspace", state, log) as session:
        text, is_error = await session.tool("workspace", "get")
    assert is_error and "refused the call (401)" in text
    log.seek(0)
    assert "not-a-token" not in log.read()


async def _ok(answer: Awaitable[tuple[str, bool]]) -> tuple[str, bool] | None:
    text, is_error = await answer
    return None if is_error else (text, is_error)


# -- set-up --------------------------------------------------------------------------------------------------------


async def test_the_entry_make_serve_prints_starts_the_bridge_as_it_stands(live, seeded, tmp_path, log):
    printed = "\n".join(_claude_code_setup(f"{live.url}/mcp", seeded.agent_token))
    _, _, after = printed.partition("session (a Claude Code channel, see README):\n")
    snippet, _, command_line = after.partition("\nand start Claude Code with the channel enabled:\n")
    entry = json.loads(snippet)["mcpServers"]["agent-workspace"]
    assert entry["args"] == ["--url", f"{live.url}/mcp"] and entry["env"] == {
        "AGENT_WORKSPACE_TOKEN": seeded.agent_token
    }
    assert command_line.strip() == "claude --dangerously-load-development-channels server:agent-workspace"
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env={**entry["env"], "XDG_STATE_HOME": str(tmp_path)}
    )
    async with Client(stdio_client(params, errlog=log), mode="auto") as client:
        assert "task" in [t.name for t in (await client.list_tools()).tools]
        await eventually(lambda: list((tmp_path / "agent-workspace-channel").glob("*.json")))  # its cursor, kept


def test_the_channel_package_needs_nothing_of_the_server():
    """Installable on its own (`pip install ./channel`): the MCP SDK on the server's pin, its HTTP client and a
    WebSocket client (the push), no AWS."""
    project = tomllib.loads((ROOT / "channel" / "pyproject.toml").read_text())["project"]
    wanted = {(r := Requirement(line)).name: r.specifier for line in project["dependencies"]}
    assert set(wanted) == {"mcp", "httpx2", "websockets"}
    server_pins = [
        Requirement(line.split("#")[0]) for line in REQUIREMENTS.read_text().splitlines() if line[:1].isalpha()
    ]
    assert wanted["mcp"] == next(r.specifier for r in server_pins if r.name == "mcp")
    assert project["scripts"]["agent-workspace-channel"] == "agent_workspace_channel.__main__:main"
    sources = "".join(path.read_text() for path in (ROOT / "channel" / "agent_workspace_channel").glob("*.py"))
    assert "agent_workspace." not in sources and "boto" not in sources


# -- what Claude Code needs from its command line ------------------------------------------------------------------


async def test_the_bridge_refuses_to_start_without_a_token(live, tmp_path):
    command = _command()
    process = await anyio.run_process(
        [*command, "--url", f"{live.url}/mcp", "--state", str(tmp_path / "s.json")],
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert process.returncode == 2
    assert b"AGENT_WORKSPACE_TOKEN" in process.stderr
