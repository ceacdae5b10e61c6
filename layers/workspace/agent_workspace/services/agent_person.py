"""What the reference reserves for the person (issue 18): the @handle, sharing and accepting, transferring,
archiving, deleting, locking the prompt and restoring a prompt version. The REST API and the console call these;
over MCP each is refused (tools.agent.PERSON_ONLY)."""

from dataclasses import replace
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_checkout import CheckoutAgent, checkout, instruction
from agent_workspace.domain.agent_records import Share, TransferOffer
from agent_workspace.domain.agents import Agent
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import echo
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts, agents
from agent_workspace.services.agent_sessions import entry
from agent_workspace.store.agent_writes import Refused

ACCESS = ("read", "edit")


def owned(rt: Runtime, actor: Actor, ref: str) -> Any:
    """The agent, which must be the caller's account's own: only its owner decides these."""
    found = agents.reach(rt, actor, ref, consistent=True)
    if not found.owned:
        raise Forbidden(f"agent {found.agent.id} is shared with this account; only its owner decides that")
    return found.agent


def change_slug(rt: Runtime, actor: Actor, ref: str, slug: str, expected_revision: int | None) -> dict[str, Any]:
    agent = owned(rt, actor, ref)
    rules.check_slug(slug)
    if expected_revision is not None and expected_revision != agent.revision:
        raise Conflict(f"agent {agent.id} is at revision {agent.revision}, not {expected_revision}; read it again")
    if slug == agent.slug:
        return agent.public()
    edited = replace(agent, slug=slug, revision=agent.revision + 1, updated_at=iso(rt.clock()))
    try:
        rt.agents.change_slug(edited, agent.slug, agent.revision)
    except Refused as refused:
        if refused.rule == "slug":
            raise Conflict(f"slug {slug!r} is taken by another agent of this account; choose another") from None
        raise Conflict(f"agent {agent.id} changed meanwhile; read it again") from None
    rt.agents.record(agent.id, entry(rt, agent.id, "agent", f"handle @{agent.slug} became @{slug}", actor))
    return edited.public()


def set_switch(rt: Runtime, actor: Actor, ref: str, switch: str, on: bool) -> dict[str, Any]:
    """Lock the prompt (profiles and briefs with it), or archive the agent (no loads, no writes)."""
    agent = owned(rt, actor, ref)
    field, said = {"lock": ("promptLocked", "prompt locked"), "archive": ("archived", "archived")}[switch]
    summary = said if on else said.replace("locked", "unlocked").replace("archived", "restored from the archive")
    rt.agents.set_fields(agent.id, {field: on}, entry(rt, agent.id, "agent", summary, actor))
    found = rt.agents.get(agent.id, consistent=True)
    assert found is not None
    return found.public()


def delete(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = owned(rt, actor, ref)
    try:
        rt.agents.delete(agent)
    except Refused:
        raise Conflict(f"agent {agent.id} changed meanwhile; read it again") from None
    return {"deleted": agent.id}


def restore_prompt_version(rt: Runtime, actor: Actor, ref: str, version: int) -> dict[str, Any]:
    """A new live version with an earlier one's body (versions are immutable: nothing is rewritten)."""
    agent = owned(rt, actor, ref)
    old = rt.agents.prompt(agent.id, version) if version >= 1 else None
    if old is None:
        raise NotFound(f"agent {agent.id} has no prompt version {version}")
    made = agents.update_prompt(
        rt, actor, agent.id, old.body, agent.prompt_version, f"restored version {version}", None, None
    )
    return {"agent": agent.id, "version": made.version, "restored": version}


def share(rt: Runtime, actor: Actor, ref: str, account_id: str, access: str, memory: bool) -> dict[str, Any]:
    """Shared with another account of this deployment, which accepts it before it can load it."""
    agent = owned(rt, actor, ref)
    if access not in ACCESS:
        raise PayloadError("access must be read or edit", field="access")
    if not is_id(account_id) or account_id == agent.account_id:
        raise PayloadError("account must be the id of another account of this deployment", field="account")
    current = rt.agents.share(account_id, agent.id)
    made = Share(agent.id, agent.account_id, account_id, agent.slug, access, memory, iso(rt.clock()))
    if current is not None and current.current(agent):  # new terms keep what the receiver chose (a void share
        # left by an earlier owner is overwritten, unaccepted)
        made = replace(
            made, accepted=current.accepted, accepted_version=current.accepted_version, follow=current.follow
        )
    what = f"shared with account {account_id} ({access}{', memory' if memory else ''})"
    try:
        rt.agents.put_share(made, entry(rt, agent.id, "sharing", what, actor), new=current is None)
    except Refused as refused:
        if refused.rule == "account":
            raise NotFound(f"no account {echo(account_id)} in this deployment") from None
        raise Conflict("the share changed meanwhile; read it again") from None
    return made.public()


def unshare(rt: Runtime, actor: Actor, ref: str, account_id: str) -> dict[str, Any]:
    agent = owned(rt, actor, ref)
    current = rt.agents.share(account_id, agent.id) if is_id(account_id) else None
    if current is None:
        raise NotFound(f"agent {agent.id} is not shared with account {echo(account_id)}")
    rt.agents.delete_share(current, entry(rt, agent.id, "sharing", f"no longer shared with {account_id}", actor))
    return {"unshared": account_id}


def shares(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = owned(rt, actor, ref)
    return {"agent": agent.id, "shares": [s.public() for s in rt.agents.shares_of(agent.id) if s.current(agent)]}


def accept(rt: Runtime, actor: Actor, ref: str, follow: bool) -> dict[str, Any]:
    """The receiving person takes the agent at its live version, following its updates or not."""
    found = agents.reach(rt, actor, ref, consistent=True)
    if found.share is None:
        raise PayloadError("this account owns the agent: there is nothing to accept", field="agent")
    accepted = replace(found.share, accepted=True, accepted_version=found.agent.prompt_version, follow=follow)
    what = f"account {actor.account_id} accepted version {accepted.accepted_version}"
    try:
        rt.agents.put_share(accepted, entry(rt, found.agent.id, "sharing", what, actor), new=False)
    except Refused:
        raise NotFound(f"agent {found.share.ref} is no longer shared with this account") from None
    return accepted.public()


def mint_credential(
    rt: Runtime, actor: Actor, ref: str, workspace_id: str, harness: str | None, server_url: str
) -> dict[str, Any]:
    """An agent token of one of the account's workspaces, minted to run this agent: shown once, stored hashed; with
    how to connect the harness and the instruction that loads the agent."""
    found = agents.find_loadable(rt, actor, ref)
    accounts.owned_workspace(rt.accounts, actor.account_id, workspace_id)
    tool = rules.harness_id(harness) if harness is not None else "other"
    issued = accounts.issue_token(rt.accounts, TokenKind.AGENT, actor.account_id, workspace_id)
    agent = found.agent
    what = f"credential {issued.record.id} minted in workspace {workspace_id}"
    rt.agents.record(agent.id, entry(rt, agent.id, "agent", what, actor))
    pointer = CheckoutAgent(agent.id, agent.slug, agent.name, agent.description)
    guide = checkout(pointer, tool, "primary", None, server_url, {}, None, False)
    return {
        "agent": agent.id,
        "workspaceId": workspace_id,
        "tokenId": issued.record.id,
        "agentToken": issued.token,
        "createdAt": issued.record.created_at,
        "connect": guide["connect"],
        "load": instruction(pointer, tool, None),
    }


def transfer(rt: Runtime, actor: Actor, ref: str, account_id: str) -> dict[str, Any]:
    """An offer: the agent becomes the other account's only when its person accepts, and the offer grants that
    account nothing meanwhile. A new offer replaces a pending one."""
    agent = owned(rt, actor, ref)
    if not is_id(account_id) or account_id == agent.account_id:
        raise PayloadError("account must be the id of another account of this deployment", field="account")
    offer = TransferOffer(agent.id, agent.account_id, account_id, agent.slug, agent.name, iso(rt.clock()))
    try:
        rt.agents.offer(
            offer, agent, entry(rt, agent.id, "sharing", f"transfer offered to account {account_id}", actor)
        )
    except Refused as refused:
        if refused.rule == "account":
            raise NotFound(f"no account {echo(account_id)} in this deployment") from None
        raise Conflict(f"agent {agent.id} changed meanwhile; read it again") from None
    return {"agent": agent.id, "account": account_id, "status": "offered", "offeredAt": offer.offered_at}


def withdraw_transfer(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = owned(rt, actor, ref)
    if agent.offered_to is None:
        raise NotFound(f"agent {agent.id} has no pending transfer offer")
    _end_offer(rt, agent.id, agent.offered_to, f"transfer offer to account {agent.offered_to} withdrawn", actor)
    return {"agent": agent.id, "withdrawn": agent.offered_to}


def transfer_offers(rt: Runtime, actor: Actor) -> dict[str, Any]:
    """The transfers other accounts offer this one, to accept or decline."""
    return {"offers": [offer.public() for offer in rt.agents.offers_to(actor.account_id)]}


def _offered(rt: Runtime, actor: Actor, agent_id: str) -> Agent:
    """The agent, if its transfer is offered to the caller's account; one answer otherwise, whether it exists."""
    agent = rt.agents.get(agent_id, consistent=True) if is_id(agent_id) else None
    if agent is None or agent.offered_to != actor.account_id:
        raise NotFound(f"no transfer of agent {echo(agent_id)!r} is offered to this account")
    return agent


def accept_transfer(rt: Runtime, actor: Actor, agent_id: str) -> dict[str, Any]:
    """The receiving person takes the agent: from then on it is this account's own, every share the previous
    owner made and every open load session ends."""
    agent = _offered(rt, actor, agent_id)
    account_id = actor.account_id
    now = iso(rt.clock())
    what = f"transferred from account {agent.account_id} to account {account_id}; its shares and sessions ended"
    try:
        rt.agents.transfer(
            agent, account_id, rules.AGENTS_PER_ACCOUNT, now, entry(rt, agent.id, "sharing", what, actor)
        )
    except Refused as refused:
        if refused.rule == "slug":
            raise Conflict(f"this account has an agent @{agent.slug} already; change that handle first") from None
        if refused.rule == "cap":
            raise Conflict(f"this account holds {rules.AGENTS_PER_ACCOUNT} agents already") from None
        raise Conflict(f"agent {agent.id} or its offer changed meanwhile; read it again") from None
    count("AgentTransferred")
    found = rt.agents.get(agent.id, consistent=True)
    assert found is not None
    return found.public()


def decline_transfer(rt: Runtime, actor: Actor, agent_id: str) -> dict[str, Any]:
    agent = _offered(rt, actor, agent_id)
    _end_offer(rt, agent.id, actor.account_id, f"account {actor.account_id} declined the transfer", actor)
    return {"agent": agent.id, "declined": True}


def _end_offer(rt: Runtime, agent_id: str, account_id: str, summary: str, actor: Actor) -> None:
    try:
        rt.agents.end_offer(agent_id, account_id, entry(rt, agent_id, "sharing", summary, actor))
    except Refused:
        raise NotFound(f"the transfer of agent {agent_id} to account {account_id} is no longer pending") from None
