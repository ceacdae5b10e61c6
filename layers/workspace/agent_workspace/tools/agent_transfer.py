"""The `agent` tool's checkout, import and export actions (checkout_agent, import_agent, export_agent)."""

from typing import Any, Literal

from pydantic import Field

from agent_workspace.domain import agents as rules
from agent_workspace.services import agent_transfer
from agent_workspace.tool_registry import Action, Call, Payload
from agent_workspace.tools.agent_sessions import AGENT, actor
from agent_workspace.tools.answers.agent import AgentBundle, Checkout, ImportedAgent


class CheckoutPayload(Payload):
    agent: str = AGENT
    harness: str | None = Field(
        None, description=f"A tool id ({', '.join(rules.HARNESSES)}); default other (AGENTS.md)"
    )
    mode: Literal["primary", "helper"] = Field(
        "primary",
        description="primary (default): the workspace's own agent; helper: a subagent where the tool has them",
    )
    pin: int | None = Field(None, description="Pin a prompt version (1 or more)")
    snapshot: bool = Field(False, description="Also write an offline snapshot: this puts private memory on disk")
    applyProjectSettings: bool = Field(
        False, description="Also merge the profile into the project's shared settings file, committed for everyone"
    )


class ImportPayload(Payload):
    name: str | None = Field(None, description=f"1-{rules.NAME_MAX} characters; required unless subagent names it")
    slug: str | None = Field(None, description="The @handle; derived from the name when absent")
    description: str | None = Field(None, description=f"Up to {rules.DESCRIPTION_MAX:,} characters")
    prompt: str | None = Field(None, description=f"Up to {rules.PROMPT_MAX:,} characters")
    primaryHarness: str | None = Field(None, description="A tool id")
    profiles: dict[str, Any] | None = Field(
        None, description="Keyed by tool id (or default): {settings: {...}, addendum: '...'}"
    )
    memories: list[dict[str, Any]] | None = Field(
        None,
        description=f"Up to {rules.MEMORIES_PER_AGENT:,}: each {{name, type, description, body}}, or {{file: <a Claude "
        "Code memory file's content>}}",
    )
    briefs: list[dict[str, Any]] | None = Field(
        None, description=f"Up to {rules.BRIEFS_PER_AGENT}: each {{name, description, body}}"
    )
    subagent: str | None = Field(
        None,
        description="A Claude Code subagent file's content (frontmatter + body): its name, description and settings, "
        "and its body as the prompt, where the fields above leave them out",
    )


class ExportPayload(Payload):
    agent: str = AGENT


def check_out(call: Call, p: CheckoutPayload) -> dict:
    return agent_transfer.check_out(
        call.runtime,
        actor(call),
        p.agent,
        p.harness,
        p.mode,
        p.pin,
        p.snapshot,
        p.applyProjectSettings,
        f"{call.base_url}/mcp",
    )


def import_agent(call: Call, p: ImportPayload) -> dict:
    return agent_transfer.import_agent(
        call.runtime,
        actor(call),
        p.name,
        p.slug,
        p.description,
        p.prompt,
        p.primaryHarness,
        p.profiles,
        p.memories,
        p.briefs,
        p.subagent,
    )


def export(call: Call, p: ExportPayload) -> dict:
    return agent_transfer.export(call.runtime, actor(call), p.agent)


ACTIONS = (
    Action(
        name="checkout",
        summary="The file operations that make a workspace load this agent at session start, for one tool: a "
        "pointer, never a credential. Apply every operation verbatim, in order.",
        payload=CheckoutPayload,
        handler=check_out,
        read_only=True,
        result=Checkout,
        example={"agent": "release-captain", "harness": "claude-code"},
    ),
    Action(
        name="import",
        summary="Create an agent from a definition in one call: prompt, profiles, memories and briefs, or a Claude "
        "Code subagent file and its memory files.",
        payload=ImportPayload,
        handler=import_agent,
        result=ImportedAgent,
        example={
            "name": "Reviewer",
            "prompt": "You review pull requests.",
            "memories": [{"name": "style", "type": "feedback", "description": "House style", "body": "No nits."}],
        },
    ),
    Action(
        name="export",
        summary="The agent as one bundle (prompt, profiles, briefs, every live memory you may read) in import's shape.",
        payload=ExportPayload,
        handler=export,
        read_only=True,
        result=AgentBundle,
        example={"agent": "release-captain"},
    ),
)
