"""The MCP server: `tools/list` and `tools/call` owned by hand on the SDK's low-level `Server`."""

import importlib
from functools import cache
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from agent_workspace import __version__
from agent_workspace.mcp_server import skills_extension
from agent_workspace.mcp_server.deferred import deferred
from agent_workspace.mcp_server.dispatch import HELP_TOOL, answer_help, dispatch, surface_registry
from agent_workspace.mcp_server.surfaces import SURFACES, WORKSPACE, ListedTool, Surface
from agent_workspace.mcp_server.tool_schemas import flat_input_schema, flat_output_schema, input_schema, output_schema
from agent_workspace.tool_registry import Call, Registry, Tool
from agent_workspace.tools import REGISTRY

INSTRUCTIONS = (
    "This server is a workspace shared with a human and other agents. Every tool takes "
    '{"action": "<action>", "payload": {...}}. Start a session with workspace {"action": "get"} to load the '
    'mission, then memory {"action": "load"} for what earlier agents learned, then task {"action": "get"} to '
    'take the next task assigned to you. help {} lists every tool; help {"action": "<tool>.<action>"} '
    "shows an action's fields and an example."
)

# Served by modules imported with their first request (`deferred`).
_RESOURCES = "agent_workspace.mcp_server.resources"
_PROMPTS = "agent_workspace.mcp_server.prompts"
REQUEST_STATE_KEY = "workspace_call"  # set on the ASGI scope's state by the authenticating endpoint


def _listed_tool(tool: Tool) -> types.Tool:
    lines = [tool.summary, "", "Actions:"]
    lines += [f"- {action.name}: {action.summary}" for action in tool.all_actions()]
    lines += ["", f'Run help {{"action": "{tool.name}.<action>"}} for an action\'s payload fields and an example.']
    read_only = all(a.read_only for a in tool.actions)
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description="\n".join(lines),
        input_schema=input_schema(tool),
        output_schema=output_schema(tool),
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=read_only,
            destructive_hint=any(a.destructive for a in tool.actions),
            idempotent_hint=all(a.read_only or a.idempotent for a in tool.actions),
            open_world_hint=tool.open_world,
        ),
    )


def _help_tool() -> types.Tool:
    return types.Tool(
        name=HELP_TOOL,
        title="Help",
        description=(
            "The server's own reference for every tool and action: help {} lists the tools, "
            'help {"action": "<tool>"} one tool\'s actions, help {"action": "<tool>.<action>"} one action\'s payload.'
        ),
        input_schema={
            "type": "object",
            "properties": {
                "action": {"type": "string", "description": "A tool name, or <tool>.<action>; leave out for all tools."}
            },
        },
        annotations=types.ToolAnnotations(
            title="Help", read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )


def _reference_tool(registry: Registry, listed: ListedTool) -> types.Tool:
    """A reference's tool by its own name: its description, its arguments flat, its own hints."""
    tool = registry.tool(listed.target[0])
    action = tool.action(listed.target[1]) if tool else None
    assert tool is not None and action is not None, listed.name
    title = listed.name.replace("_", " ").capitalize()
    return types.Tool(
        name=listed.name,
        title=title,
        description=listed.description,
        input_schema=flat_input_schema(listed, action),
        output_schema=flat_output_schema(listed, action),
        annotations=types.ToolAnnotations(
            title=title,
            read_only_hint=action.read_only,
            destructive_hint=action.destructive,
            idempotent_hint=action.read_only or action.idempotent,
            open_world_hint=tool.open_world,
        ),
    )


@cache
def listed_tools(registry: Registry, surface: Surface = WORKSPACE) -> list[types.Tool]:
    """What `tools/list` answers on the path of `surface`."""
    action_tools = [_listed_tool(tool) for tool in surface_registry(registry, surface)]
    references = [_reference_tool(registry, listed) for listed in surface.listed]
    return [*action_tools, *references, *([_help_tool()] if surface.lists_help else [])]


def build_server(registry: Registry, surface: Surface = WORKSPACE) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed_tools(registry, surface))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call: Call = ctx.request.state.workspace_call
        outcome = await dispatch(registry, call, params.name, params.arguments, surface)
        texts = outcome.blocks or (outcome.text,)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in texts],
            structured_content=outcome.structured,
            is_error=outcome.is_error,
        )

    server: Server[Any] = Server(
        "agent-workspace",
        version=__version__,
        title="Agent Workspace",
        instructions=surface.instructions or INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=deferred(_PROMPTS, "list_prompts"),
        on_get_prompt=deferred(_PROMPTS, "get_prompt", registry),
        on_list_resources=deferred(_RESOURCES, "list_resources"),
        on_list_resource_templates=deferred(_RESOURCES, "list_resource_templates"),
        on_read_resource=deferred(_RESOURCES, "read_resource"),
    )
    skills_extension.register(server)
    # The SDK warns on `on_set_logging_level` (logging is deprecated as of 2026-07-28); older clients still set one.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_logging_level)
    return server


async def _set_logging_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    """Accepted as asked: the server sends no log notifications, so every level is already honoured."""
    return types.EmptyResult()


def workspace_server(surface: Surface = WORKSPACE) -> Server[Any]:
    """The server of this deployment's tools on one MCP path: the app wires it in without knowing the tools."""
    return build_server(REGISTRY, surface)


def build_all() -> None:
    """What the first requests would build, built now: every tool (its models), each path's `tools/list` and `help`,
    and the modules of the deferred handlers. Run before a SnapStart snapshot (functions/api/app.py), so an instance
    restored from it builds none of it on a first call."""
    for surface in SURFACES:
        listed_tools(REGISTRY, surface)
        if surface.lists_help:
            answer_help(surface_registry(REGISTRY, surface), {})
    for module in (_RESOURCES, _PROMPTS, skills_extension.READS):
        importlib.import_module(module)
