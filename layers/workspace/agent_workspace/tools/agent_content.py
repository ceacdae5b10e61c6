"""The `agent` tool's profile and brief actions (get_agent_profiles, set_agent_profile, delete_agent_profile,
list_agent_briefs, get_agent_brief, update_agent_brief, rename_agent_brief)."""

from pydantic import Field

from agent_workspace.domain import agents as rules
from agent_workspace.services import agent_briefs, agent_profiles
from agent_workspace.tool_registry import Action, Call, Payload
from agent_workspace.tools.agent_sessions import AGENT, SESSION, actor
from agent_workspace.tools.answers.agent import (
    BriefAnswer,
    BriefList,
    BriefRenamed,
    BriefWritten,
    ProfileRemoved,
    Profiles,
    ProfileSet,
)

SettingValue = str | bool | None


class ProfilesPayload(Payload):
    agent: str = AGENT


class SetProfilePayload(Payload):
    agent: str = AGENT
    harness: str = Field(description=f"A tool id ({', '.join(rules.HARNESSES)}) or default")
    settings: dict[str, SettingValue] | None = Field(
        None, description=f"That tool's own settings: strings up to {rules.SETTING_VALUE_MAX}, booleans or null"
    )
    addendum: str | None = Field(None, description=f"Markdown up to {rules.ADDENDUM_MAX:,}, appended only in this tool")
    expectedRevision: int | None = Field(None, description="The profile revision you read")
    session: str | None = SESSION


class DeleteProfilePayload(Payload):
    agent: str = AGENT
    harness: str = Field(description="A tool id or default")


class BriefsPayload(Payload):
    agent: str = AGENT


class GetBriefPayload(Payload):
    agent: str = AGENT
    name: str = Field(description=f"kebab-case, up to {rules.MEMORY_NAME_MAX}")
    revision: int | None = Field(None, description="1 or more; absent: the latest")


class UpdateBriefPayload(Payload):
    agent: str = AGENT
    name: str = Field(description=f"kebab-case, up to {rules.MEMORY_NAME_MAX}")
    body: str = Field(description=f"The whole brief, Markdown up to {rules.BRIEF_BYTES_MAX:,} bytes of UTF-8")
    session: str | None = Field(None, description="The session load_agent returned for this same agent")
    description: str | None = Field(None, description="Up to 200 characters; required to create")
    expectedRevision: int | None = Field(None, description="The revision you read; required to update")
    note: str | None = Field(None, description=f"Why, up to {rules.NOTE_MAX} characters")


class RenameBriefPayload(Payload):
    agent: str = AGENT
    name: str = Field(description="The brief's current name")
    newName: str = Field(description="kebab-case, up to 64")
    session: str | None = Field(None, description="The session load_agent returned for this same agent")


def profiles(call: Call, p: ProfilesPayload) -> dict:
    return agent_profiles.get_profiles(call.runtime, actor(call), p.agent)


def set_profile(call: Call, p: SetProfilePayload) -> dict:
    return agent_profiles.set_profile(
        call.runtime, actor(call), p.agent, p.harness, p.settings, p.addendum, p.expectedRevision, p.session
    )


def delete_profile(call: Call, p: DeleteProfilePayload) -> dict:
    return agent_profiles.delete_profile(call.runtime, actor(call), p.agent, p.harness)


def briefs(call: Call, p: BriefsPayload) -> dict:
    return agent_briefs.list_briefs(call.runtime, actor(call), p.agent)


def get_brief(call: Call, p: GetBriefPayload) -> dict:
    return agent_briefs.get_brief(call.runtime, actor(call), p.agent, p.name, p.revision)


def update_brief(call: Call, p: UpdateBriefPayload) -> dict:
    return agent_briefs.update_brief(
        call.runtime, actor(call), p.agent, p.name, p.body, p.session, p.description, p.expectedRevision, p.note
    )


def rename_brief(call: Call, p: RenameBriefPayload) -> dict:
    return agent_briefs.rename_brief(call.runtime, actor(call), p.agent, p.name, p.newName, p.session)


_ID = {"agent": "release-captain"}
_SESSION_ID = "7e1c9a52-0f3b-4d68-b2a4-9c5d1e8f3a60"

ACTIONS = (
    Action(
        name="profiles",
        summary="The agent's per-tool profiles (settings and addendum) and the default profile.",
        payload=ProfilesPayload,
        handler=profiles,
        read_only=True,
        result=Profiles,
        example=_ID,
    ),
    Action(
        name="setProfile",
        summary="Create or replace the agent's profile for one tool; settings are checked against that tool's fields.",
        payload=SetProfilePayload,
        handler=set_profile,
        result=ProfileSet,
        idempotent=True,
        example={"agent": "release-captain", "harness": "claude-code", "settings": {"model": "opus"}},
    ),
    Action(
        name="deleteProfile",
        summary="Remove the agent's profile for one tool; that tool falls back to the default profile.",
        payload=DeleteProfilePayload,
        handler=delete_profile,
        destructive=True,
        result=ProfileRemoved,
        idempotent=True,
        example={"agent": "release-captain", "harness": "cursor"},
    ),
    Action(
        name="briefs",
        summary="The agent's briefs by name, description, revision and last change, without bodies.",
        payload=BriefsPayload,
        handler=briefs,
        read_only=True,
        result=BriefList,
        example=_ID,
    ),
    Action(
        name="getBrief",
        summary="One brief with its body and revision.",
        payload=GetBriefPayload,
        handler=get_brief,
        read_only=True,
        result=BriefAnswer,
        example={"agent": "release-captain", "name": "deploy"},
    ),
    Action(
        name="updateBrief",
        summary="Create a brief (no expectedRevision, description required) or update one (expectedRevision).",
        payload=UpdateBriefPayload,
        handler=update_brief,
        result=BriefWritten,
        example={
            "agent": "release-captain",
            "name": "deploy",
            "description": "How we deploy",
            "body": "Run `make deploy`.",
            "session": _SESSION_ID,
        },
    ),
    Action(
        name="renameBrief",
        summary="Give a brief a new name; its revisions and body stay as they are.",
        payload=RenameBriefPayload,
        handler=rename_brief,
        result=BriefRenamed,
        idempotent=True,
        example={"agent": "release-captain", "name": "deploy", "newName": "deploying", "session": _SESSION_ID},
    ),
)
