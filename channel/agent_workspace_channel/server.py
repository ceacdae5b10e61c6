"""The stdio MCP server Claude Code spawns: the workspace's tools, prompts, resources and skills, forwarded, and the
channel.

It speaks the handshake era only: Claude Code does not register a channel server that negotiates the 2026-07-28
protocol, and it probes a stdio server with `server/discover` first. This one answers that probe "method not found",
so the client falls back to `initialize` (2025-11-25) and the channel is registered.

Results pass through as the workspace's SDK objects (a tool's outputSchema, a call's structuredContent, a listing's
nextCursor), and the workspace's JSON-RPC errors (a resource it cannot read: -32602 naming the URI's problem) reach
Claude Code as they are.
"""

import json
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_connection
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from agent_workspace_channel import __version__
from agent_workspace_channel.config import Config
from agent_workspace_channel.outbox import PERMISSION_REQUEST, Outbox
from agent_workspace_channel.poller import Poller
from agent_workspace_channel.push import PushSource
from agent_workspace_channel.relay import PermissionRequest, Relay
from agent_workspace_channel.state import State
from agent_workspace_channel.upstream import Refused, Unreachable, Workspace

logger = logging.getLogger(__name__)

NAME = "agent-workspace"
CHANNEL_CAPABILITIES: dict[str, dict[str, Any]] = {"claude/channel": {}, "claude/channel/permission": {}}
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"  # the Agent Skills extension (SEP-2640)
SKILLS_LIST = "skills/list"
SKILLS_GET = "skills/get"
# What a result gains on the 2026-07-28 protocol the workspace speaks upstream, and Claude Code's handshake-era session
# has no use for: the cache hints, the result type, the server's identity in `_meta`. The bridge rebuilds the spec's
# results from their fields; an extension's result, a plain dict, is cleaned of these.
MODERN_ONLY = frozenset({"ttlMs", "cacheScope", "resultType"})
WARM_UP_SECONDS = 3.0  # how long start-up waits for the workspace's tools and instructions before serving


class GetSkillParams(types.RequestParams):
    uri: str
    """The skill's own URI: skill://<name>/SKILL.md."""


CHANNEL_INSTRUCTIONS = (
    'Agent Workspace pushes your work into this session as <channel source="agent-workspace" chat_id="…" kind="…">. '
    "chat_id is the task's id: pass it as taskId to every task action. kind says what happened: task (a new task "
    "for you: its title, body and attachments), reply (the human wrote on your task), answer (the human answered a "
    "question you had stopped waiting on), reopened or assigned (a task handed back to you), trigger (an event "
    'started a task). Set a task ongoing with task {"action": "updateStatus"} when you start it: a task still not '
    'started is pushed again (repeat="1"). Read the whole task and its conversation with task {"action": "get", '
    '"payload": {"taskId": …, "includeConversation": true}}, and answer the human with task {"action": "reply"}. '
    "When you ask for permission to use a tool, the human may answer from the workspace's console instead of here."
)


class Bridge:
    """The workspace's face in Claude Code: forwards the tool calls, owns the channel's background work."""

    def __init__(self, config: Config, workspace: Workspace, state: State) -> None:
        self._config = config
        self._workspace = workspace
        self._tools: list[types.Tool] | None = None
        self._stale = False  # a list was answered from memory (or empty): the client should read it again
        self._current_task: str | None = None
        self._instructions = CHANNEL_INSTRUCTIONS
        self.outbox = Outbox()
        self.relay = Relay(workspace, self.outbox, lambda: self._current_task)
        self.poller = Poller(config, workspace, state, self.outbox, self.relay, self._answered)
        self.push = PushSource(workspace, self.poller)

    # -- tools, prompts, resources, skills ------------------------------------------------------------------------

    async def warm_up(self) -> None:
        """The tools and the workspace's own instructions, if the workspace answers quickly; start-up goes on if not."""
        with anyio.move_on_after(WARM_UP_SECONDS):
            try:
                self._tools = await self._workspace.list_tools()
            except (Unreachable, Refused) as error:
                logger.warning("workspace not reachable at start-up (%s); tools are listed once it is", error)
                return
            if upstream := self._workspace.instructions:
                self._instructions = f"{CHANNEL_INSTRUCTIONS}\n\n{upstream}"

    def _unreachable(self, error: Unreachable) -> str:
        return (
            f"agent-workspace is unreachable at {self._config.url} ({error}); retrying. "
            "Call the tool again in a moment."
        )

    async def list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            self._tools = await self._workspace.list_tools()
        except Unreachable:
            self._stale = True
            logger.warning("tools/list answered %s: workspace unreachable", "from memory" if self._tools else "empty")
        except Refused as error:
            raise MCPError(types.INTERNAL_ERROR, f"agent-workspace refused to list tools ({error})") from None
        return types.ListToolsResult(tools=self._tools or [])

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await self._workspace.call_tool(params.name, params.arguments)
        except Unreachable as error:
            return _error(self._unreachable(error))
        except Refused as error:
            return _error(f"agent-workspace refused the call ({error.status}): {error.detail}")
        except MCPError as error:
            return _error(f"agent-workspace: {error.error.message}")
        if not result.is_error:
            self._observe(params.name, params.arguments or {}, result)
        return result

    def _observe(self, tool: str, arguments: dict[str, Any], result: types.CallToolResult) -> None:
        """Which task the agent is on, from its own task calls: what a permission question is about, and whether a
        pushed task was taken (then it is not pushed again)."""
        payload = arguments.get("payload") or {}
        if tool != "task" or not isinstance(payload, dict):
            return
        named = payload.get("taskId") or payload.get("chatId")
        task_id: object
        status: object
        if arguments.get("action") == "get" and not named:
            task_id, status = _id_in(result), "ongoing"  # a dequeue: the task it hands over is the agent's now
        elif arguments.get("action") == "updateStatus":
            task_id, status = named, payload.get("status")
        else:
            return
        if not isinstance(task_id, str) or status == "notstarted":
            return
        self.poller.started(task_id)
        if status == "ongoing":
            self._current_task = task_id
        elif self._current_task == task_id:
            self._current_task = None

    async def list_prompts(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        try:
            return types.ListPromptsResult(prompts=await self._workspace.list_prompts())
        except (Unreachable, Refused, MCPError) as error:
            self._stale = True
            logger.warning("prompts/list answered empty: %s", error)
            return types.ListPromptsResult(prompts=[])

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return await self._workspace.get_prompt(params.name, params.arguments)
        except (Unreachable, Refused) as error:
            raise self._failed(error) from None

    def _failed(self, error: Unreachable | Refused) -> MCPError:
        """A request the workspace did not answer, as the JSON-RPC error Claude Code gets (its own errors pass as
        they are)."""
        if isinstance(error, Unreachable):
            return MCPError(types.INTERNAL_ERROR, self._unreachable(error))
        return MCPError(types.INVALID_PARAMS, f"agent-workspace refused it ({error})")

    def _unlisted(self, method: str, error: Unreachable | Refused, cursor: str | None) -> None:
        """A listing the workspace did not answer. Its first page is answered empty and the client told to list again
        once the workspace answers, as for prompts; a later page is an error, since an empty one would end the walk
        as if it were complete."""
        if cursor:
            raise self._failed(error) from None
        self._stale = True
        logger.warning("%s answered empty: %s", method, error)

    async def list_resources(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        try:
            page = await self._workspace.list_resources(cursor)
        except (Unreachable, Refused) as error:
            self._unlisted("resources/list", error, cursor)
            return types.ListResourcesResult(resources=[])
        return types.ListResourcesResult(resources=page.resources, next_cursor=page.next_cursor)

    async def list_resource_templates(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        cursor = params.cursor if params else None
        try:
            page = await self._workspace.list_resource_templates(cursor)
        except (Unreachable, Refused) as error:
            self._unlisted("resources/templates/list", error, cursor)
            return types.ListResourceTemplatesResult(resource_templates=[])
        return types.ListResourceTemplatesResult(
            resource_templates=page.resource_templates, next_cursor=page.next_cursor
        )

    async def read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            read = await self._workspace.read_resource(params.uri)
        except (Unreachable, Refused) as error:
            raise self._failed(error) from None
        return types.ReadResourceResult(contents=read.contents)

    async def list_skills(self, ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        cursor = params.cursor
        try:
            listed = await self._workspace.extension_request(SKILLS_LIST, {"cursor": cursor} if cursor else {})
        except (Unreachable, Refused) as error:
            self._unlisted(SKILLS_LIST, error, cursor)
            return {"skills": []}
        return _handshake_era(listed)

    async def get_skill(self, ctx: Any, params: GetSkillParams) -> dict[str, Any]:
        try:
            return _handshake_era(await self._workspace.extension_request(SKILLS_GET, {"uri": params.uri}))
        except (Unreachable, Refused) as error:
            raise self._failed(error) from None

    async def _answered(self) -> None:
        """The workspace answers: a client given an empty or remembered list is told to read it again."""
        if self._stale:
            self._stale = False
            await self.outbox.lists_changed()

    # -- the channel --------------------------------------------------------------------------------------------

    async def permission_request(self, ctx: Any, params: PermissionRequest) -> None:
        await self.relay.ask(params)

    def server(self) -> Server[Any]:
        server: Server[Any] = Server(
            NAME,
            version=__version__,
            title="Agent Workspace (channel)",
            instructions=self._instructions,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
        )
        server.extensions[SKILLS_EXTENSION] = {}
        server.middleware.append(_skills_declared_at_initialize)
        server.add_request_handler(SKILLS_LIST, types.PaginatedRequestParams, self.list_skills)
        server.add_request_handler(SKILLS_GET, GetSkillParams, self.get_skill)
        server.add_request_handler("server/discover", types.RequestParams, _no_discover)
        server.add_notification_handler(PERMISSION_REQUEST, PermissionRequest, self.permission_request)
        return server

    async def serve(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one client until it closes stdin; the channel's events (pushed, else polled) and the pushes run
        beside it."""
        await self.warm_up()
        server = self.server()
        options = server.create_initialization_options(
            NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True), CHANNEL_CAPABILITIES
        )
        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
            read_stream, write_stream, inline_methods=frozenset({"initialize"})
        )
        connection = Connection.for_loop(dispatcher)
        self.outbox.attach(connection)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self.push.run)
            tasks.start_soon(self.poller.repush)
            await serve_connection(server, dispatcher, connection=connection, lifespan_state={}, init_options=options)
            tasks.cancel_scope.cancel()


async def _no_discover(ctx: Any, params: types.RequestParams) -> types.DiscoverResult:
    raise MCPError(types.METHOD_NOT_FOUND, "Method not found", "server/discover")


async def _skills_declared_at_initialize(ctx: Any, call_next: CallNext) -> HandlerResult:
    """The skills extension in the capabilities of `initialize`, where Claude Code's handshake-era session looks.

    The SDK keeps `capabilities.extensions` out of a handshake-era `initialize` (the field came with 2026-07-28), but
    clients look for the extension there in either era (the workspace's own server adds it the same way), and the
    2025-11-25 schema leaves capabilities open.
    """
    result = await call_next(ctx)
    if ctx.method != "initialize" or not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
        return result
    capabilities = result["capabilities"]
    extensions = {**capabilities.get("extensions", {}), SKILLS_EXTENSION: {}}
    return {**result, "capabilities": {**capabilities, "extensions": extensions}}


def _handshake_era(result: dict[str, Any]) -> dict[str, Any]:
    cleaned = {key: value for key, value in result.items() if key not in MODERN_ONLY and key != "_meta"}
    meta = result.get("_meta")
    if isinstance(meta, dict) and (kept := {k: v for k, v in meta.items() if k != types.SERVER_INFO_META_KEY}):
        cleaned["_meta"] = kept
    return cleaned


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _id_in(result: types.CallToolResult) -> str | None:
    text = "".join(block.text for block in result.content if isinstance(block, types.TextContent))
    try:
        task = json.loads(text)
    except ValueError:
        return None
    return task.get("id") if isinstance(task, dict) and isinstance(task.get("id"), str) else None
