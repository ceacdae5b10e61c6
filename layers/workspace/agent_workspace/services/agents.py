"""The agent repo's use cases (issue 18, decision 0009): agents of the account, and their prompt versions."""

from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agents import Agent, PromptVersion
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError, RateLimited
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.store.agents import AgentCapReached, RateSpent, SlugTaken

VERSIONS_LISTED_MAX = 50


def find(rt: Runtime, actor: Actor, ref: str, consistent: bool = False) -> Agent:
    """The agent `ref` names in the caller's account: its id, or its slug."""
    agent_id = ref if is_id(ref) else None
    if agent_id is None and len(ref) <= rules.SLUG_MAX and ref == ref.strip().lower():
        agent_id = rt.agents.id_of_slug(actor.account_id, ref)
    agent = rt.agents.get(agent_id, consistent) if agent_id else None
    if agent is None or agent.account_id != actor.account_id:
        raise NotFound(f"no agent {echo(ref)!r} in this account")
    return agent


def create(
    rt: Runtime,
    actor: Actor,
    name: str,
    slug: str | None,
    description: str,
    prompt: str | None,
    primary_harness: str | None,
) -> Agent:
    """An agent, inert until somebody loads it; with a prompt, that is its version 1."""
    rules.check_name(name)
    slug = rules.check_slug(slug) if slug is not None else rules.slug_of(name)
    rules.check_description(description)
    if prompt is not None:
        rules.check_prompt(prompt)
    harness = rules.harness_id(primary_harness, "primaryHarness") if primary_harness is not None else None
    now = iso(rt.clock())
    first = bool(prompt and prompt.strip())
    agent = Agent(
        id=new_id(),
        account_id=actor.account_id,
        name=name,
        slug=slug,
        description=description,
        created_at=now,
        updated_at=now,
        created_by=actor.kind,
        primary_harness=harness,
        prompt_version=1 if first else 0,
    )
    version = PromptVersion(agent.id, 1, prompt or "", now, actor.kind, actor.token_id, harness) if first else None
    try:
        rt.agents.create(agent, version, rules.AGENTS_PER_ACCOUNT)
    except SlugTaken:
        raise Conflict(f"slug {slug!r} is taken by another agent of this account; choose another") from None
    except AgentCapReached:
        raise Conflict(f"this account has {rules.AGENTS_PER_ACCOUNT} agents already, the most it may hold") from None
    count("AgentCreated")
    return agent


def list_agents(rt: Runtime, actor: Actor, view: str) -> dict[str, Any]:
    if view not in ("mine", "shared", "archived"):
        raise PayloadError("view must be mine, shared or archived", field="view")
    found = rt.agents.of_account(actor.account_id) if view == "mine" else []
    return {"agents": [agent.listed() for agent in found]}


def update(rt: Runtime, actor: Actor, ref: str, changes: dict[str, Any], expected_revision: int | None) -> Agent:
    """The name, description, accent or primary harness; the @handle is the owner's (the human's) to change."""
    if "slug" in changes and actor.kind == "agent":
        raise Forbidden(
            "the slug (@handle) is the owner's to change, because a rename breaks mentions written "
            "before; the person changes it in the console"
        )
    current = find(rt, actor, ref, consistent=True)
    if expected_revision is not None and expected_revision != current.revision:
        raise Conflict(f"agent {current.id} is at revision {current.revision}, not {expected_revision}; read it again")
    if "name" in changes:
        rules.check_name(changes["name"])
    if "description" in changes:
        rules.check_description(changes["description"])
    if "accent" in changes and changes["accent"] is not None:
        rules.check_accent(changes["accent"])
    if changes.get("primary_harness") is not None:
        changes["primary_harness"] = rules.harness_id(changes["primary_harness"], "primaryHarness")
    edited = replace(current, **changes, revision=current.revision + 1, updated_at=iso(rt.clock()))
    rt.agents.replace(edited, current.revision)
    count("AgentUpdated")
    return edited


def update_prompt(
    rt: Runtime, actor: Actor, ref: str, body: str, based_on: int, note: str | None, harness: str | None
) -> PromptVersion:
    """A new prompt version, live at once, only on top of the live one it was edited from."""
    rules.check_prompt(body, "body", required=True)
    if note is not None and len(note) > rules.NOTE_MAX:
        raise PayloadError(f"note is {len(note)} characters; at most {rules.NOTE_MAX}", field="note")
    agent = find(rt, actor, ref, consistent=True)
    if agent.prompt_locked:
        raise Conflict(f"the owner locked the prompt of agent {agent.id}")
    if based_on != agent.prompt_version:
        live = rt.agents.prompt(agent.id, agent.prompt_version) if agent.prompt_version else None
        raise Conflict(
            f"basedOn {based_on} is not the live version {agent.prompt_version}; read it (get_agent_prompt), merge "
            f"and write again. The live prompt:\n{live.body if live else ''}"
        )
    now = rt.clock()
    version = PromptVersion(agent.id, based_on + 1, body, iso(now), actor.kind, actor.token_id, harness, note)
    rate = None
    if actor.kind == "agent":
        day = now.strftime("%Y-%m-%d")
        expires = int((now + timedelta(days=2)).timestamp())
        rate = (f"RATE#prompt#{actor.token_id}#{day}", rules.PROMPT_VERSIONS_PER_DAY, expires)
    try:
        rt.agents.add_prompt(agent, version, rate)
    except RateSpent:
        raise RateLimited(
            f"this connection wrote {rules.PROMPT_VERSIONS_PER_DAY} prompt versions of agent {agent.id} today, "
            "the most a day",
            retry_after=_seconds_to_midnight(now),
        ) from None
    except Conflict:
        raise Conflict(f"agent {agent.id}'s live prompt changed meanwhile; read it again") from None
    count("AgentPromptVersion")
    return version


def prompt_versions(rt: Runtime, actor: Actor, ref: str, limit: int, cursor: str | None) -> dict[str, Any]:
    agent = find(rt, actor, ref)
    if not 1 <= limit <= VERSIONS_LISTED_MAX:
        raise PayloadError(f"limit must be 1-{VERSIONS_LISTED_MAX}", field="limit")
    versions, next_cursor = rt.agents.prompt_versions(agent.id, limit, cursor)
    return {"versions": [v.listed(agent.prompt_version) for v in versions], "nextCursor": next_cursor}


def get_prompt(rt: Runtime, actor: Actor, ref: str, version: int | None) -> dict[str, Any]:
    agent = find(rt, actor, ref)
    wanted = agent.prompt_version if version is None else version
    if version is not None and version < 1:
        raise PayloadError("version must be 1 or more", field="version")
    found = rt.agents.prompt(agent.id, wanted) if wanted else None
    if found is None:
        raise NotFound(
            f"agent {agent.id} has no prompt version {wanted}" if wanted else f"agent {agent.id} has no prompt yet"
        )
    return {"agent": agent.id, **found.public(agent.prompt_version)}


def _seconds_to_midnight(now: Any) -> int:
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - now).total_seconds()))
