"""The `agent` tool's load, memory and activity actions (load_agent, agent_recall, agent_remember, agent_forget,
agent_activity)."""

from typing import Literal

from pydantic import Field

from agent_workspace.domain import agents as rules
from agent_workspace.domain.models import Actor
from agent_workspace.services import agent_memory, agent_sessions
from agent_workspace.tool_registry import Action, Call, Payload, TextBlocks
from agent_workspace.tools.answers.agent import ActivityPage, MemoryForgotten, MemoryPage, MemoryWritten

AGENT = Field(
    description="The agent: its id (preferred, it survives a rename), its slug, or <owner>/<slug> of one shared"
)
SESSION = Field(None, description="The session id load_agent returned")
_TYPES = ", ".join(rules.MEMORY_TYPES)


class LoadPayload(Payload):
    agent: str = AGENT
    harness: str | None = Field(None, description=f"The tool you are: {', '.join(rules.HARNESSES)}")
    workspace: str | None = Field(None, description=f"The directory or project, up to {rules.WORKSPACE_MAX}")
    version: int | None = Field(None, description="A pinned prompt version (1 or more); absent: the one you run")
    budget: int = Field(
        rules.BUDGET_DEFAULT,
        description=f"Characters for the memory index and pinned bodies, {rules.BUDGET_MIN:,}-{rules.BUDGET_MAX:,}",
    )


class RecallPayload(Payload):
    agent: str = AGENT
    query: str | None = Field(None, description="Words, up to 500 characters: full text over name, description, body")
    name: str | None = Field(None, description="Fetch exactly this memory")
    type: str | None = Field(None, description=_TYPES)
    writtenBy: str | None = Field(None, description="agent, people, import or collaborators")
    sort: Literal["recent", "name", "type"] = Field("recent", description="recent (default), name or type")
    limit: int = Field(20, description="1-100, default 20")
    cursor: str | None = Field(None, description="nextCursor of the previous page, with the same filters")


class RememberPayload(Payload):
    agent: str = AGENT
    session: str | None = SESSION
    name: str = Field(description=f"kebab-case, up to {rules.MEMORY_NAME_MAX}")
    body: str = Field(description=f"Markdown up to {rules.MEMORY_BODY_MAX:,} characters; for append, the paragraph")
    mode: Literal["create", "update", "append"] = Field("create", description="create (default), update or append")
    type: str | None = Field(None, description=f"{_TYPES}; required to create")
    description: str | None = Field(None, description="One line for the index, up to 200; required to create")
    expectedRevision: int | None = Field(None, description="The revision you read; required to update")


class ForgetPayload(Payload):
    agent: str = AGENT
    session: str | None = SESSION
    reason: str = Field(description=f"Why, 1-{rules.FORGET_REASON_MAX} characters")
    name: str | None = Field(None, description="The memory's name (or give id)")
    id: str | None = Field(None, description="The memory's id from agent_recall (or give name)")


class ActivityPayload(Payload):
    agent: str = AGENT
    kind: Literal["all", "prompt", "briefs", "memory", "sessions", "sharing", "agent"] = Field(
        "all",
        description="all (default), prompt, briefs, memory, sessions, sharing, or agent (its record: created, "
        "handle, lock, archive, credentials)",
    )
    limit: int = Field(50, description="1-100, default 50")
    cursor: str | None = None


def actor(call: Call) -> Actor:
    return Actor.of(call.principal)


def load(call: Call, p: LoadPayload) -> TextBlocks:
    blocks, _ = agent_sessions.load(call.runtime, actor(call), p.agent, p.harness, p.workspace, p.version, p.budget)
    return TextBlocks(blocks)


def recall(call: Call, p: RecallPayload) -> dict:
    return agent_memory.recall(
        call.runtime, actor(call), p.agent, p.query, p.name, p.type, p.writtenBy, p.sort, p.limit, p.cursor
    )


def remember(call: Call, p: RememberPayload) -> dict:
    return agent_memory.remember(
        call.runtime, actor(call), p.agent, p.session, p.name, p.body, p.mode, p.type, p.description, p.expectedRevision
    )


def forget(call: Call, p: ForgetPayload) -> dict:
    return agent_memory.forget(call.runtime, actor(call), p.agent, p.session, p.name, p.id, p.reason)


def activity(call: Call, p: ActivityPayload) -> dict:
    return agent_sessions.activity_of(call.runtime, actor(call), p.agent, p.kind, p.limit, p.cursor)


_ID = {"agent": "release-captain"}
_SESSION_ID = "7e1c9a52-0f3b-4d68-b2a4-9c5d1e8f3a60"

ACTIONS = (
    Action(
        name="load",
        summary="Load an agent at the start of a session: its prompt, memory rules and index, briefs, mentions and "
        "a session id. Call it first when the workspace or the person names an agent.",
        payload=LoadPayload,
        handler=load,
        read_only=True,  # it opens a session record but changes none of the agent's content (the reference's scope)
        example={"agent": "release-captain", "harness": "claude-code", "workspace": "/work/website"},
    ),
    Action(
        name="recall",
        summary="Search the agent's memory by words, fetch one by name, or list by type; full bodies.",
        payload=RecallPayload,
        handler=recall,
        read_only=True,
        result=MemoryPage,
        example={"agent": "release-captain", "query": "release checklist"},
    ),
    Action(
        name="remember",
        summary="Write to the agent's memory inside a load session: create, update (expectedRevision) or append.",
        payload=RememberPayload,
        handler=remember,
        result=MemoryWritten,
        example={
            "agent": "release-captain",
            "session": _SESSION_ID,
            "name": "release-checklist",
            "type": "project",
            "description": "Steps we run before each release",
            "body": "Run the smoke test, then tag the release.",
        },
    ),
    Action(
        name="forget",
        summary="Forget a wrong or obsolete memory inside a load session; a person can restore it for 30 days.",
        payload=ForgetPayload,
        handler=forget,
        destructive=True,
        result=MemoryForgotten,
        idempotent=True,
        example={"agent": "release-captain", "session": _SESSION_ID, "name": "old-host", "reason": "moved hosts"},
    ),
    Action(
        name="activity",
        summary="What happened to the agent, newest first: sessions and their writes, prompt versions, briefs, "
        "memory edits, shares.",
        payload=ActivityPayload,
        handler=activity,
        read_only=True,
        result=ActivityPage,
        example=_ID,
    ),
)
