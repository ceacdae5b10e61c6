"""Per-harness profiles (issue 18): settings checked against each harness's own fields (domain.agents'
PROFILE_SETTINGS) and an addendum appended to the prompt only in that harness; `default` serves the rest."""

from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_records import Profile
from agent_workspace.domain.errors import Conflict, NotFound
from agent_workspace.domain.models import Actor
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services.agent_sessions import check_session, entry
from agent_workspace.services.agents import checked_profile, find, readable
from agent_workspace.store.agent_writes import Refused


def get_profiles(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = readable(rt, actor, ref).agent
    profiles = {p.harness: p.public() for p in rt.agents.profiles(agent.id)}
    default = profiles.pop(rules.DEFAULT_PROFILE, None) or {
        "harness": rules.DEFAULT_PROFILE,
        "settings": {},
        "addendum": "",
        "revision": 0,
    }
    return {"agent": agent.id, "default": default, "profiles": profiles}


def set_profile(
    rt: Runtime,
    actor: Actor,
    ref: str,
    harness: str,
    settings: dict[str, Any] | None,
    addendum: str | None,
    expected_revision: int | None,
    session: str | None,
) -> dict[str, Any]:
    """Created or replaced whole; refused while the owner has locked the prompt."""
    harness = rules.harness_id(harness, allow_default=True)
    session = check_session(session) if session is not None else None
    agent = find(rt, actor, ref)
    current = {p.harness: p for p in rt.agents.profiles(agent.id)}.get(harness)
    if expected_revision is not None and (current.revision if current else 0) != expected_revision:
        raise _stale(harness, current, expected_revision)
    revision = (current.revision if current else 0) + 1
    profile = checked_profile(agent.id, harness, settings or {}, addendum or "", revision, rt.clock())
    if actor.kind != "human" or agent.account_id != actor.account_id:  # an agent, or a share receiver
        rules.check_safety(harness, profile.settings, current.settings if current else {})
    write = rt.agent_briefs.write(agent.id).activity(
        entry(rt, agent.id, "prompt", f"profile for {harness} set (revision {revision})", actor, session)
    )
    try:
        rt.agents.put_profile(profile, current.revision if current else 0, write)
    except Refused as refused:
        if refused.rule == "locked":
            raise Conflict(
                f"the owner locked the prompt of agent {agent.id}; its profiles are locked with it"
            ) from None
        latest = {p.harness: p for p in rt.agents.profiles(agent.id)}.get(harness)
        raise _stale(harness, latest, revision - 1) from None
    count("AgentProfileSet")
    return {"agent": agent.id, **profile.public()}


def delete_profile(rt: Runtime, actor: Actor, ref: str, harness: str) -> dict[str, Any]:
    harness = rules.harness_id(harness, allow_default=True)
    agent = find(rt, actor, ref)
    if actor.kind != "human" or agent.account_id != actor.account_id:  # removing it must lift no denied tool
        current = {p.harness: p for p in rt.agents.profiles(agent.id)}.get(harness)
        rules.check_safety(harness, {}, current.settings if current else {})
    write = rt.agent_briefs.write(agent.id).activity(
        entry(rt, agent.id, "prompt", f"profile for {harness} removed", actor)
    )
    try:
        rt.agents.delete_profile(agent.id, harness, write)
    except Refused as refused:
        if refused.rule == "locked":
            raise Conflict(
                f"the owner locked the prompt of agent {agent.id}; its profiles are locked with it"
            ) from None
        raise NotFound(f"agent {agent.id} has no profile for {harness}") from None
    return {"removed": harness}


def _stale(harness: str, current: Profile | None, expected: int) -> Conflict:
    shown = current.public() if current else None
    return Conflict(
        f"the profile for {harness} is at revision {current.revision if current else 0}, not {expected}; "
        f"read it again. The current profile: {shown}"
    )
