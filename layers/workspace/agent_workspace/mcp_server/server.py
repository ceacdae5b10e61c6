"""The MCP server: `tools/list` and `tools/call` owned by hand on the SDK's low-level `Server`."""

from functools import cache
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from agent_workspace import __version__
from agent_workspace.mcp_server.dispatch import HELP_TOOL, dispatch
from agent_workspace.mcp_server.registry import Call, Registry, Tool
from agent_workspace.tools import REGISTRY

INSTRUCTIONS = (
    "This server is a workspace shared with a human and other agents. Every tool takes "
    '{"action": "<action>", "payload": {...}}. Start a session with workspace {"action": "get"} to load the '
    'mission, then memory {"action": "load"} for what earlier agents learned, then task {"action": "get"} to '
    'take the next task assigned to you. help {} lists every tool; help {"action": "<tool>.<action>"} '
    "shows an action's fields and an example."
)

REQUEST_STATE_KEY = "workspace_call"  # set on the ASGI scope's state by the authenticating endpoint


def _listed_tool(tool: Tool) -> types.Tool:
    lines = [tool.summary, "", "Actions:"]
    lines += [f"- {action.name}: {action.summary}" for action in tool.all_actions()]
    lines += ["", f'Run help {{"action": "{tool.name}.<action>"}} for an action\'s payload fields and an example.']
    return types.Tool(
        name=tool.name,
        description="\n".join(lines),
        input_schema={
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": tool.action_names, "description": "The action to run."},
                "payload": {
                    "type": "object",
                    "description": "The action's fields; leave it out when the action takes none.",
                },
            },
            "required": ["action"],
        },
        annotations=types.ToolAnnotations(
            read_only_hint=all(a.read_only for a in tool.actions),
            destructive_hint=any(a.destructive for a in tool.actions),
            open_world_hint=False,
        ),
    )


def _help_tool() -> types.Tool:
    return types.Tool(
        name=HELP_TOOL,
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
        annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
    )


@cache
def listed_tools(registry: Registry) -> list[types.Tool]:
    return [*(_listed_tool(tool) for tool in registry), _help_tool()]


def build_server(registry: Registry) -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed_tools(registry))

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        call: Call = ctx.request.state.workspace_call
        outcome = await dispatch(registry, call, params.name, params.arguments)
        texts = outcome.blocks or (outcome.text,)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in texts], is_error=outcome.is_error
        )

    return Server(
        "agent-workspace",
        version=__version__,
        title="Agent Workspace",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def workspace_server() -> Server[Any]:
    """The server of this deployment's tools: the app wires it in without knowing the tools itself."""
    return build_server(REGISTRY)
