"""Human REST API: the account's agent repo (issue 18). Everything an agent can do over MCP, and what only the
person decides: the @handle, sharing and accepting, transfer, archive, delete, the prompt lock, pinning and
restoring memories, restoring a prompt version, deleting a brief."""

from typing import Any, Literal

from fastapi import APIRouter, Query, Request, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain import agents as rules
from agent_workspace.domain.models import Actor, Principal
from agent_workspace.services import (
    agent_briefs,
    agent_memory,
    agent_person,
    agent_profiles,
    agent_sessions,
    agent_transfer,
    agents,
)
from agent_workspace.web.auth import base_url

router = APIRouter(prefix="/api/agents", tags=["agents"], responses=problem_responses(401, 403, 404, 409, 422, 503))

Setting = str | bool | None


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class AgentIn(Body):
    name: str = Field(json_schema_extra={"maxLength": rules.NAME_MAX})
    slug: str | None = None
    description: str = ""
    prompt: str | None = None
    primaryHarness: str | None = None
    profiles: dict[str, dict[str, Any]] | None = None


class AgentEdit(Body):
    name: str | None = None
    slug: str | None = Field(None, description="The @handle: the owner's to change; mentions written before break")
    description: str | None = None
    accent: str | None = None
    primaryHarness: str | None = None
    expectedRevision: int | None = None


class ImportIn(Body):
    name: str | None = None
    slug: str | None = None
    description: str | None = None
    prompt: str | None = None
    primaryHarness: str | None = None
    profiles: dict[str, Any] | None = None
    memories: list[dict[str, Any]] | None = None
    briefs: list[dict[str, Any]] | None = None
    subagent: str | None = None


class Switch(Body):
    on: bool


class PromptIn(Body):
    body: str
    basedOn: int
    note: str | None = None


class ProfileIn(Body):
    settings: dict[str, Setting] | None = None
    addendum: str | None = None
    expectedRevision: int | None = None


class BriefIn(Body):
    body: str
    description: str | None = None
    expectedRevision: int | None = None
    note: str | None = None


class RenameIn(Body):
    newName: str


class MemoryIn(Body):
    body: str
    mode: Literal["create", "update", "append"] = "create"
    type: str | None = None
    description: str | None = None
    expectedRevision: int | None = None


class ForgetIn(Body):
    reason: str


class PinIn(Body):
    pinned: bool


class ShareIn(Body):
    account: str
    access: Literal["read", "edit"] = "read"
    memory: bool = False


class AcceptIn(Body):
    follow: bool = False


class CredentialIn(Body):
    workspace: str = Field(description="The workspace of the account the token reaches")
    harness: str | None = Field(None, description="The tool it is for, to tailor the connect note")


class TransferIn(Body):
    account: str


def _person(human: Principal) -> Actor:
    """The person, account-wide: agents belong to the account, not to one workspace."""
    return Actor(kind="human", account_id=human.account_id, workspace_id="", token_id=human.token_id)


@router.get("")
def list_agents(
    human: HumanDep, rt: RuntimeDep, view: Literal["mine", "shared", "archived"] = "mine"
) -> dict[str, Any]:
    """The account's agents (mine, archived) or those shared with it (shared)."""
    return agents.list_agents(rt, _person(human), view)


@router.post("", status_code=status.HTTP_201_CREATED)
def create(payload: AgentIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    made = agents.create(
        rt, _person(human), payload.name, payload.slug, payload.description, payload.prompt,
        payload.primaryHarness, payload.profiles,
    )  # fmt: skip
    return made.public()


@router.get("/transfer-offers")
def transfer_offers(human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Agents other accounts offer to transfer to this one, to accept or decline."""
    return agent_person.transfer_offers(rt, _person(human))


@router.post("/import", status_code=status.HTTP_201_CREATED)
def import_agent(payload: ImportIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    p = payload
    return agent_transfer.import_agent(
        rt, _person(human), p.name, p.slug, p.description, p.prompt, p.primaryHarness, p.profiles, p.memories,
        p.briefs, p.subagent,
    )  # fmt: skip


@router.get("/{agent}")
def read(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    found = agents.reach(rt, _person(human), agent)
    shown = found.agent.public() | agents.shown(found) | {"description": found.agent.description}
    if found.owned and found.agent.offered_to:
        shown["transferOffer"] = {"account": found.agent.offered_to, "offeredAt": found.agent.offered_at}
    return shown | ({"share": found.share.public()} if found.share else {})


@router.patch("/{agent}")
def edit(agent: str, payload: AgentEdit, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Name, description, accent, primary tool, and (the owner's alone) the @handle."""
    person = _person(human)
    names = {"name": "name", "description": "description", "accent": "accent", "primaryHarness": "primary_harness"}
    changes = {names[f]: getattr(payload, f) for f in payload.model_fields_set if f in names}
    revision = payload.expectedRevision
    shown: dict[str, Any] = {}
    if payload.slug is not None:
        shown = agent_person.change_slug(rt, person, agent, payload.slug, revision)
        revision, agent = None, shown["id"]
    if changes:
        shown = agents.update(rt, person, agent, changes, revision).public()
    return shown or agents.reach(rt, person, agent).agent.public()


@router.delete("/{agent}")
def delete(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """The agent, its prompt versions, memories, briefs, sessions and shares: for everyone, for good."""
    return agent_person.delete(rt, _person(human), agent)


@router.put("/{agent}/archived")
def archive(agent: str, payload: Switch, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_person.set_switch(rt, _person(human), agent, "archive", payload.on)


@router.put("/{agent}/prompt-lock")
def lock(agent: str, payload: Switch, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """While locked, no connection writes the prompt, the profiles or the briefs."""
    return agent_person.set_switch(rt, _person(human), agent, "lock", payload.on)


@router.get("/{agent}/prompt")
def prompt(agent: str, human: HumanDep, rt: RuntimeDep, version: int | None = None) -> dict[str, Any]:
    return agents.get_prompt(rt, _person(human), agent, version)


@router.post("/{agent}/prompt", status_code=status.HTTP_201_CREATED)
def write_prompt(agent: str, payload: PromptIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    made = agents.update_prompt(rt, _person(human), agent, payload.body, payload.basedOn, payload.note, None)
    return {"agent": made.agent_id, "version": made.version, "status": "live"}


@router.get("/{agent}/prompt/versions")
def versions(agent: str, human: HumanDep, rt: RuntimeDep, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
    return agents.prompt_versions(rt, _person(human), agent, limit, cursor)


@router.post("/{agent}/prompt/versions/{version}/restore", status_code=status.HTTP_201_CREATED)
def restore_version(agent: str, version: int, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """A new live version with this one's body."""
    return agent_person.restore_prompt_version(rt, _person(human), agent, version)


@router.get("/{agent}/profiles")
def profiles(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_profiles.get_profiles(rt, _person(human), agent)


@router.put("/{agent}/profiles/{harness}")
def set_profile(agent: str, harness: str, payload: ProfileIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    p = payload
    return agent_profiles.set_profile(
        rt, _person(human), agent, harness, p.settings, p.addendum, p.expectedRevision, None
    )


@router.delete("/{agent}/profiles/{harness}")
def delete_profile(agent: str, harness: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_profiles.delete_profile(rt, _person(human), agent, harness)


@router.get("/{agent}/briefs")
def briefs(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_briefs.list_briefs(rt, _person(human), agent)


@router.get("/{agent}/briefs/{name}")
def brief(agent: str, name: str, human: HumanDep, rt: RuntimeDep, revision: int | None = None) -> dict[str, Any]:
    return agent_briefs.get_brief(rt, _person(human), agent, name, revision)


@router.put("/{agent}/briefs/{name}")
def write_brief(agent: str, name: str, payload: BriefIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    p = payload
    return agent_briefs.update_brief(
        rt, _person(human), agent, name, p.body, None, p.description, p.expectedRevision, p.note
    )


@router.post("/{agent}/briefs/{name}/rename")
def rename_brief(agent: str, name: str, payload: RenameIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_briefs.rename_brief(rt, _person(human), agent, name, payload.newName, None)


@router.delete("/{agent}/briefs/{name}")
def delete_brief(agent: str, name: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Every revision, for everyone the agent is shared with."""
    return agent_briefs.delete_brief(rt, _person(human), agent, name)


@router.get("/{agent}/memories")
def memories(
    agent: str,
    human: HumanDep,
    rt: RuntimeDep,
    query: str | None = None,
    type: str | None = None,  # noqa: A002 - the reference's field name
    writtenBy: str | None = None,  # noqa: N803
    sort: Literal["recent", "name", "type"] = "recent",
    limit: int = 20,
    cursor: str | None = None,
) -> dict[str, Any]:
    return agent_memory.recall(rt, _person(human), agent, query, None, type, writtenBy, sort, limit, cursor)


@router.put("/{agent}/memories/{name}")
def write_memory(agent: str, name: str, payload: MemoryIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    p = payload
    return agent_memory.remember(
        rt, _person(human), agent, None, name, p.body, p.mode, p.type, p.description, p.expectedRevision
    )


@router.post("/{agent}/memories/{name}/forget")
def forget_memory(agent: str, name: str, payload: ForgetIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_memory.forget(rt, _person(human), agent, None, name, None, payload.reason)


@router.put("/{agent}/memories/{name}/pinned")
def pin_memory(agent: str, name: str, payload: PinIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """A pinned memory loads whole, before the index."""
    return agent_memory.pin(rt, _person(human), agent, name, payload.pinned)


@router.get("/{agent}/forgotten")
def forgotten(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Forgotten memories a person may still restore (for 30 days)."""
    return agent_memory.forgotten(rt, _person(human), agent)


@router.post("/{agent}/forgotten/{memory_id}/restore")
def restore_memory(agent: str, memory_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_memory.restore(rt, _person(human), agent, memory_id)


@router.get("/{agent}/activity")
def activity(
    agent: str,
    human: HumanDep,
    rt: RuntimeDep,
    kind: Literal["all", "prompt", "briefs", "memory", "sessions", "sharing", "agent"] = "all",
    limit: int = 50,
    cursor: str | None = None,
) -> dict[str, Any]:
    return agent_sessions.activity_of(rt, _person(human), agent, kind, limit, cursor)


@router.get("/{agent}/export")
def export(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_transfer.export(rt, _person(human), agent)


@router.get("/{agent}/checkout")
def checkout(
    agent: str,
    request: Request,
    human: HumanDep,
    rt: RuntimeDep,
    harness: str | None = None,
    mode: Literal["primary", "helper"] = "primary",
    pin: int | None = Query(None),
) -> dict[str, Any]:
    mcp_url = f"{base_url(rt, request)}/mcp"
    return agent_transfer.check_out(rt, _person(human), agent, harness, mode, pin, False, False, mcp_url)


@router.get("/{agent}/shares")
def shares(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_person.shares(rt, _person(human), agent)


@router.post("/{agent}/shares", status_code=status.HTTP_201_CREATED)
def share(agent: str, payload: ShareIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Share with another account of this deployment; it accepts before it can load the agent."""
    return agent_person.share(rt, _person(human), agent, payload.account, payload.access, payload.memory)


@router.delete("/{agent}/shares/{account}")
def unshare(agent: str, account: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_person.unshare(rt, _person(human), agent, account)


@router.post("/{agent}/accept")
def accept(agent: str, payload: AcceptIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Accept an agent shared with this account, at its live version; `follow` takes later versions too."""
    return agent_person.accept(rt, _person(human), agent, payload.follow)


@router.post("/{agent}/credentials", status_code=status.HTTP_201_CREATED)
def mint_credential(
    agent: str, payload: CredentialIn, request: Request, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """An agent token of one workspace, to run this agent in a tool: shown once, stored hashed."""
    mcp_url = f"{base_url(rt, request)}/mcp"
    return agent_person.mint_credential(rt, _person(human), agent, payload.workspace, payload.harness, mcp_url)


@router.post("/{agent}/transfer")
def transfer(agent: str, payload: TransferIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Offer ownership to another account of this deployment: it becomes that account's only when its person
    accepts; the offer grants it nothing meanwhile, and a new offer replaces a pending one."""
    return agent_person.transfer(rt, _person(human), agent, payload.account)


@router.delete("/{agent}/transfer")
def withdraw_transfer(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Withdraw the pending transfer offer."""
    return agent_person.withdraw_transfer(rt, _person(human), agent)


@router.post("/{agent}/transfer/accept")
def accept_transfer(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Take an agent offered to this account (by its id): every share and open session of it ends."""
    return agent_person.accept_transfer(rt, _person(human), agent)


@router.post("/{agent}/transfer/decline")
def decline_transfer(agent: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    return agent_person.decline_transfer(rt, _person(human), agent)
