"""The `agent` tool: the account's agent repo (On My Radar's Agent Repo tools, issue 18), landing in steps."""

from typing import Literal

from pydantic import Field

from agent_workspace.domain import agents as rules
from agent_workspace.domain import oauth
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.models import Actor
from agent_workspace.services import agent_person, agents
from agent_workspace.services.agent_sessions import check_session, forbidden_on_mcp
from agent_workspace.tool_registry import Action, Call, Payload, Tool
from agent_workspace.tools import agent_content, agent_sessions, agent_transfer
from agent_workspace.tools.agent_sessions import AGENT
from agent_workspace.tools.answers.agent import AgentAnswer, AgentList, PromptAnswer, PromptVersionPage, PromptWritten

_AGENT = AGENT
_AGENT_OPTIONAL = Field(None, description="The agent")
_EXAMPLE = {"agent": "release-captain"}


class ListPayload(Payload):
    view: Literal["mine", "shared", "archived"] = Field("mine", description="mine (default), shared or archived")
    includeArchived: bool = Field(False, description="Deprecated: the same as view 'archived'")


class CreatePayload(Payload):
    name: str = Field(description=f"1-{rules.NAME_MAX} characters")
    slug: str | None = Field(
        None,
        description=f"The @handle: lowercase letters, digits and single hyphens, up to {rules.SLUG_MAX}; "
        "derived from the name when absent",
    )
    description: str = Field("", description=f"Up to {rules.DESCRIPTION_MAX:,} characters")
    prompt: str | None = Field(None, description=f"The system prompt, up to {rules.PROMPT_MAX:,} characters")
    primaryHarness: str | None = Field(None, description=f"A tool id: {', '.join(rules.HARNESSES)}")
    profile: dict[str, str | bool | None] | None = Field(
        None, description="Settings for that tool (or the default profile), for example model and effort"
    )


class UpdatePayload(Payload):
    agent: str = _AGENT
    name: str | None = None
    slug: str | None = Field(
        None,
        description=(
            "The @handle: the owner's to change (mentions written before break). Refused here unless this connection "
            "was signed in with the manage scope and the agent is this account's own"
        ),
    )
    description: str | None = None
    accent: str | None = None
    primaryHarness: str | None = Field(None, description="A tool id, or null for none")
    expectedRevision: int | None = Field(None, description="The revision you read, to avoid overwriting a newer edit")


class UpdatePromptPayload(Payload):
    agent: str = _AGENT
    body: str = Field(description=f"The whole prompt, not empty, up to {rules.PROMPT_MAX:,} characters")
    basedOn: int = Field(description="The live version you edited from; 0 if the agent has no prompt yet")
    note: str | None = Field(None, description=f"What changed and why, up to {rules.NOTE_MAX} characters")
    harness: str | None = Field(None, description="The tool you are, recorded on the version")
    session: str | None = Field(None, description="Your load session, for provenance")


class VersionsPayload(Payload):
    agent: str = _AGENT
    limit: int = Field(50, description="1-50, default 50")
    cursor: str | None = None


class GetPromptPayload(Payload):
    agent: str = _AGENT
    version: int | None = Field(None, description="1 or more; absent: the live version")


def _actor(call: Call) -> Actor:
    return Actor.of(call.principal)


def list_agents(call: Call, p: ListPayload) -> dict:
    return agents.list_agents(call.runtime, _actor(call), "archived" if p.includeArchived else p.view)


def create(call: Call, p: CreatePayload) -> dict:
    profiles = {p.primaryHarness or rules.DEFAULT_PROFILE: {"settings": p.profile}} if p.profile else None
    made = agents.create(
        call.runtime, _actor(call), p.name, p.slug, p.description, p.prompt, p.primaryHarness, profiles
    )
    return made.public()


def update(call: Call, p: UpdatePayload) -> dict:
    names = {"name": "name", "slug": "slug", "description": "description", "accent": "accent"}
    names["primaryHarness"] = "primary_harness"
    changes = {names[f]: getattr(p, f) for f in p.model_fields_set if f in names}
    for field in ("name", "description", "slug"):
        if field in changes and changes[field] is None:
            raise PayloadError(f"{field} cannot be null", field=field)
    revision = p.expectedRevision
    if "slug" in changes and oauth.may_manage(call.principal.scopes):
        # OMR: "Changing slug instead needs radars:manage and ownership of the agent".
        renamed = agent_person.change_slug(call.runtime, _actor(call), p.agent, changes.pop("slug"), revision)
        if not changes:
            return renamed
        revision = renamed["revision"]
    return agents.update(call.runtime, _actor(call), p.agent, changes, revision).public()


def update_prompt(call: Call, p: UpdatePromptPayload) -> dict:
    harness = rules.harness_id(p.harness) if p.harness is not None else None
    session = check_session(p.session) if p.session is not None else None
    version = agents.update_prompt(call.runtime, _actor(call), p.agent, p.body, p.basedOn, p.note, harness, session)
    return {"agent": version.agent_id, "version": version.version, "status": "live"}


def versions(call: Call, p: VersionsPayload) -> dict:
    return agents.prompt_versions(call.runtime, _actor(call), p.agent, p.limit, p.cursor)


def get_prompt(call: Call, p: GetPromptPayload) -> dict:
    return agents.get_prompt(call.runtime, _actor(call), p.agent, p.version)


class PersonOnlyPayload(Payload):
    agent: str | None = _AGENT_OPTIONAL


# What the reference reserves for the person: each is an action here only to say so, for any connection.
PERSON_ONLY = {
    "share": "sharing an agent",
    "accept": "accepting an agent shared with you",
    "transfer": "transferring an agent",
    "archive": "archiving an agent",
    "delete": "deleting an agent",
    "lockPrompt": "locking an agent's prompt",
    "mintCredential": "minting a credential for an agent",
    "pinMemory": "pinning a memory",
    "restoreMemory": "restoring a forgotten memory",
    "restorePromptVersion": "restoring a prompt version",
    "deleteBrief": "deleting a brief",
}


def _person_only(what: str) -> Action:
    def refuse(call: Call, p: PersonOnlyPayload) -> dict:
        raise forbidden_on_mcp(what[0].upper() + what[1:])

    return Action(
        name=next(name for name, said in PERSON_ONLY.items() if said == what),
        summary=f"The person's decision, in the console: {what} is refused for any connection.",
        payload=PersonOnlyPayload,
        handler=refuse,
        read_only=True,
        result=(),  # it never answers: every call is refused
    )


TOOL = Tool(
    name="agent",
    title="Agents",
    summary="The account's agents: an @handle, a versioned prompt, memory and briefs that follow you to any tool.",
    actions=(
        Action(
            name="list",
            summary="The agents of the account, with what you may do to each.",
            payload=ListPayload,
            handler=list_agents,
            read_only=True,
            result=AgentList,
        ),
        Action(
            name="create",
            summary="Add an agent (inert until somebody loads it); with a prompt, that is its version 1.",
            payload=CreatePayload,
            handler=create,
            result=AgentAnswer,
            example={"name": "Release Captain", "prompt": "You run our releases.", "primaryHarness": "claude-code"},
        ),
        Action(
            name="update",
            summary="Change an agent's name, description, accent or primary tool.",
            payload=UpdatePayload,
            handler=update,
            result=AgentAnswer,
            idempotent=True,
            example={"agent": "release-captain", "description": "Runs releases.", "expectedRevision": 1},
        ),
        Action(
            name="updatePrompt",
            summary="Write a new version of the agent's prompt, live at once; refused unless basedOn is the live one.",
            payload=UpdatePromptPayload,
            handler=update_prompt,
            result=PromptWritten,
            example={"agent": "release-captain", "body": "You run our releases.", "basedOn": 1, "note": "shorter"},
        ),
        Action(
            name="promptVersions",
            summary="The prompt's versions, newest first: status, author and tool, no bodies.",
            payload=VersionsPayload,
            handler=versions,
            read_only=True,
            result=PromptVersionPage,
            example=_EXAMPLE,
        ),
        Action(
            name="getPrompt",
            summary="One version of the prompt with its body; absent version: the live one.",
            payload=GetPromptPayload,
            handler=get_prompt,
            read_only=True,
            result=PromptAnswer,
            example=_EXAMPLE,
        ),
        *agent_sessions.ACTIONS,
        *agent_content.ACTIONS,
        *agent_transfer.ACTIONS,
        *(_person_only(what) for what in PERSON_ONLY.values()),
    ),
)
