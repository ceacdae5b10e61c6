"""MCP prompts: each agent of the Agent Repo the caller may load, as a prompt a client shows as a slash command."""

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_workspace.blocking import run_blocking
from agent_workspace.domain.models import Actor
from agent_workspace.mcp_server.dispatch import dispatch
from agent_workspace.services import agent_sessions
from agent_workspace.tool_registry import Call, Registry

_PROMPT_ARGUMENTS = (
    ("harness", "The tool you are: claude-code, codex, cursor, …"),
    ("workspace", "The directory or project, as provenance"),
    ("version", "A pinned prompt version; absent: the one you run"),
    ("budget", "Characters for the memory index, 2,000-96,000"),
)


def _agent_prompt(name: str, title: str, description: str) -> types.Prompt:
    """An agent as an MCP prompt: a client that shows prompts as slash commands loads it in one step."""
    return types.Prompt(
        name=name,
        title=title,
        description=(description or f"Load the agent {title}")[:300],
        arguments=[types.PromptArgument(name=n, description=d, required=False) for n, d in _PROMPT_ARGUMENTS],
    )


def _typed(arguments: dict[str, str]) -> dict[str, Any]:
    """Prompt arguments arrive as strings: the numbers load takes, as numbers where they read as one."""
    return {
        k: int(v) if k in ("version", "budget") and v.isdigit() and len(v) < 10 else v for k, v in arguments.items()
    }


async def list_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
    call: Call = ctx.request.state.workspace_call
    agents = await run_blocking(agent_sessions.loadable, call.runtime, Actor.of(call.principal))
    return types.ListPromptsResult(prompts=[_agent_prompt(*agent) for agent in agents])


async def get_prompt(registry: Registry, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    """load_agent's text, as messages a client puts into the conversation (a session opened for them)."""
    call: Call = ctx.request.state.workspace_call
    ref = agent_sessions.ref_of_prompt(params.name)
    arguments = {"agent": ref, **(params.arguments or {})}
    outcome = await dispatch(registry, call, "agent", {"action": "load", "payload": _typed(arguments)})
    if outcome.is_error:
        raise MCPError(types.INVALID_PARAMS, outcome.text)
    texts = outcome.blocks or (outcome.text,)
    return types.GetPromptResult(
        description=f"Load agent {params.name}",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text)) for text in texts
        ],
    )
