"""The agent repo's use cases (issue 18, decision 0009): agents of the account, and their prompt versions."""

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_records import Activity, Profile, Session, Share
from agent_workspace.domain.agents import Agent, PromptVersion
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError, RateLimited
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.store.agents import AgentCapReached, RateSpent, SlugTaken


@dataclass(frozen=True)
class Reach:
    """An agent as the caller reaches it: its own account's, or shared with it on the owner's terms."""

    agent: Agent
    share: Share | None = None
    session: Session | None = None  # the caller's own load session a write rides on, read with the record

    @property
    def harness(self) -> str | None:
        """The tool the session was loaded in: recorded on what the write writes (the reference's load_agent)."""
        return self.session.harness if self.session else None

    @property
    def owned(self) -> bool:
        return self.share is None

    @property
    def can_edit(self) -> bool:
        return self.share is None or self.share.access == "edit"

    @property
    def memory(self) -> bool:
        return self.share is None or self.share.memory

    @property
    def runs_version(self) -> int:
        """Live, unless the agent is shared and its receiver did not choose to follow updates."""
        if self.share is None or self.share.follow:
            return self.agent.prompt_version
        return min(self.share.accepted_version, self.agent.prompt_version)


def reach(rt: Runtime, actor: Actor, ref: str, consistent: bool = False, session: str | None = None) -> Reach:
    """The agent `ref` names: its id, its slug in the caller's account, or `<owner account>/<slug>` of one shared
    with it. Anything else, or another account's agent not shared with this one, is not found. With `session`,
    that load session is read with the record (consistently, in the same request) and kept if it is the caller's:
    whether it may still write is the write's own condition."""
    missing = NotFound(f"no agent {echo(ref)!r} in this account or shared with it")
    owner, _, slug = ref.rpartition("/")
    if owner:
        if not (is_id(owner) and len(slug) <= rules.SLUG_MAX):
            raise missing
        agent_id = rt.agents.id_of_slug(owner, slug)
    elif is_id(ref):
        agent_id = ref
    elif len(ref) <= rules.SLUG_MAX and ref == ref.strip().lower():
        agent_id = rt.agents.id_of_slug(actor.account_id, ref)
    else:
        agent_id = None
    opened: Session | None = None
    if agent_id and session is not None:
        agent, opened = rt.agents.with_session(agent_id, session)
        opened = opened if opened is not None and opened.token_id == actor.token_id else None
    else:
        agent = rt.agents.get(agent_id, consistent) if agent_id else None
    if agent is None:
        raise missing
    if agent.account_id == actor.account_id:
        return Reach(agent, None, opened)
    share = rt.agents.share(actor.account_id, agent.id)
    if share is None or not share.current(agent):  # a share its maker no longer owns grants nothing
        raise missing
    return Reach(agent, share, opened)


def readable(rt: Runtime, actor: Actor, ref: str, session: str | None = None) -> Reach:
    """An agent whose content the caller may read: its own, or one shared with it that it accepted."""
    found = reach(rt, actor, ref, session=session)
    if found.share is not None and not found.share.accepted:
        raise Forbidden(f"agent {found.share.ref} was shared with this account but not accepted yet; accept it first")
    return found


def shown(found: Reach) -> dict[str, Any]:
    """The agent as list_agents shows it to this caller: its owner, or an account it is shared with."""
    share = found.share
    if share is None:
        return found.agent.listed()
    listed = found.agent.listed() | {"ref": share.ref, "role": "shared", "access": share.access}
    listed |= {"owner": share.owner_account_id, "runsVersion": found.runs_version, "awaitingAccept": not share.accepted}
    if not share.memory:
        listed.pop("memories")
    return listed


def find(rt: Runtime, actor: Actor, ref: str, consistent: bool = False) -> Agent:
    """The agent `ref` names, which the caller may edit (its own, or shared with edit access)."""
    return editable(rt, actor, ref, consistent).agent


def editable(rt: Runtime, actor: Actor, ref: str, consistent: bool = False, session: str | None = None) -> Reach:
    """`find`'s agent as reached, with the caller's load session when `session` names one."""
    found = reach(rt, actor, ref, consistent, session)
    if not found.can_edit:
        raise Forbidden(f"agent {found.agent.id} is shared with this account to read, not to edit")
    if found.share is not None and not found.share.accepted:
        raise Forbidden(f"agent {found.share.ref} was shared with this account but not accepted yet; accept it first")
    if found.agent.archived:
        raise Conflict(f"agent {found.agent.id} is archived; the owner restores it first")
    return found


def find_loadable(rt: Runtime, actor: Actor, ref: str) -> Reach:
    """An agent that can be loaded: not archived, and, if shared, accepted."""
    found = reach(rt, actor, ref)
    if found.agent.archived:
        raise Conflict(f"agent {found.agent.id} is archived and cannot be loaded; the owner restores it first")
    if found.share is not None and not found.share.accepted:
        raise Forbidden(
            f"agent {found.share.ref} was shared with this account but not accepted yet; accept it in the console"
        )
    return found


def profile_for(rt: Runtime, agent_id: str, harness: str | None) -> Profile | None:
    """The harness's own profile, else the default one."""
    profiles = {p.harness: p for p in rt.agents.profiles(agent_id)}
    return profiles.get(harness or rules.DEFAULT_PROFILE) or profiles.get(rules.DEFAULT_PROFILE)


def create(
    rt: Runtime,
    actor: Actor,
    name: str,
    slug: str | None,
    description: str,
    prompt: str | None,
    primary_harness: str | None,
    profiles: dict[str, dict[str, Any]] | None = None,
) -> Agent:
    """An agent, inert until somebody loads it; with a prompt, that is its version 1. `profiles` maps a harness
    (or default) to its settings and addendum."""
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
    made = tuple(_profiles(agent.id, profiles or {}, rt.clock(), owner_person=actor.kind == "human"))
    agent = replace(agent, profile_tools=frozenset(p.harness for p in made))
    version = PromptVersion(agent.id, 1, prompt or "", now, actor.kind, actor.token_id, harness) if first else None
    try:
        summary = f"created @{slug}" + (" with prompt version 1" if version else "")
        created = Activity(new_id(), agent.id, "agent", summary, now, actor.kind)
        rt.agents.create(agent, version, rules.AGENTS_PER_ACCOUNT, made, created)
    except SlugTaken:
        if (
            rt.agents.id_of_slug(actor.account_id, slug, consistent=True) != agent.id
        ):  # else: this very write, applied by a retry
            raise Conflict(f"slug {slug!r} is taken by another agent of this account; choose another") from None
    except AgentCapReached:
        raise Conflict(f"this account has {rules.AGENTS_PER_ACCOUNT} agents already, the most it may hold") from None
    count("AgentCreated")
    return agent


PROFILES_FIELD = "profiles"


def checked_profile(
    agent_id: str, harness: str, settings: dict[str, Any], addendum: str, revision: int, now: Any, where: str = ""
) -> Profile:
    """A profile whose settings are its harness's own fields and whose addendum fits."""
    if len(addendum) > rules.ADDENDUM_MAX:
        raise PayloadError(
            f"{where}addendum is {len(addendum):,} characters; at most {rules.ADDENDUM_MAX:,}", field=f"{where}addendum"
        )
    return Profile(agent_id, harness, rules.check_settings(harness, settings), addendum, revision, iso(now))


def _profiles(agent_id: str, given: dict[str, dict[str, Any]], now: Any, owner_person: bool) -> list[Profile]:
    """Each harness's profile, checked against its own settings (at most one per harness and the default); a
    setting that lowers the harness's safety only from the owner's person."""
    made = []
    for harness, profile in given.items():
        where = f"{PROFILES_FIELD}.{harness}"
        if not isinstance(profile, dict) or not set(profile) <= {"settings", "addendum"}:
            raise PayloadError(f"{where} must be an object with settings and addendum", field=where)
        settings, addendum = profile.get("settings") or {}, profile.get("addendum") or ""
        if not isinstance(settings, dict) or not isinstance(addendum, str):
            raise PayloadError(f"{where}: settings must be an object and addendum a string", field=where)
        tool = rules.harness_id(harness, where, allow_default=True)
        made.append(checked_profile(agent_id, tool, settings, addendum, 1, now, f"{where}."))
        if not owner_person:
            rules.check_safety(tool, settings, {}, f"{where}.settings")
    if len({p.harness for p in made}) < len(made):
        raise PayloadError(f"{PROFILES_FIELD} names one harness twice (an alias and its id)", field=PROFILES_FIELD)
    return made


def list_agents(rt: Runtime, actor: Actor, view: str) -> dict[str, Any]:
    """mine: the account's own agents, archived ones apart; shared: those other accounts shared with it."""
    if view not in ("mine", "shared", "archived"):
        raise PayloadError("view must be mine, shared or archived", field="view")
    if view != "shared":
        own = rt.agents.of_account(actor.account_id)
        return {"agents": [agent.listed() for agent in own if agent.archived == (view == "archived")]}
    shares = {share.agent_id: share for share in rt.agents.shares_with(actor.account_id)}
    reached = [Reach(agent, shares[agent.id]) for agent in rt.agents.many(list(shares))]
    return {"agents": [shown(found) for found in reached if found.share and found.share.current(found.agent)]}


def update(rt: Runtime, actor: Actor, ref: str, changes: dict[str, Any], expected_revision: int | None) -> Agent:
    """The name, description, accent or primary harness; the @handle is the owner's (the human's) to change."""
    if "slug" in changes and actor.kind == "agent":
        raise Forbidden(
            "the slug (@handle) is the owner's to change, because a rename breaks mentions written "
            "before; the person changes it in the console (or signs an app in with the manage scope)"
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


def session_of(
    rt: Runtime, actor: Actor, agent_id: str, session: str, consistent: bool = False, since: str | None = None
) -> Session | None:
    """The load session if this connection opened it for this agent (after `since`, the agent's last transfer),
    else None: a session is its connection's, and a transfer ends them all."""
    found = rt.agents.session(agent_id, session, consistent)
    if found is None or found.token_id != actor.token_id:
        return None
    return found if since is None or found.started_at >= since else None


def update_prompt(
    rt: Runtime,
    actor: Actor,
    ref: str,
    body: str,
    based_on: int,
    note: str | None,
    harness: str | None,
    session: str | None = None,
) -> PromptVersion:
    """A new prompt version, live at once, only on top of the live one it was edited from. A session names the
    tool it was loaded in, recorded on the version (the reference's "who wrote each and in which tool")."""
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
    if session is not None:  # provenance: the tool is the one the session was loaded in, unless named
        opened = session_of(rt, actor, agent.id, session, True, agent.owned_since)  # loaded a moment ago
        if opened is None:
            raise rules.foreign_session(agent.id, session)
        harness = harness or opened.harness
    now = rt.clock()
    version = PromptVersion(agent.id, based_on + 1, body, iso(now), actor.kind, actor.token_id, harness, note)
    rate = None
    if actor.kind == "agent":
        day = now.strftime("%Y-%m-%d")
        expires = int((now + timedelta(days=2)).timestamp())
        rate = (f"RATE#prompt#{actor.token_id}#{day}", rules.PROMPT_VERSIONS_PER_DAY, expires)
    try:
        summary = f"prompt version {version.version}" + (f": {note}" if note else "")
        made = Activity(new_id(), agent.id, "prompt", summary, version.created_at, actor.kind, session, harness)
        rt.agents.add_prompt(agent, version, rate, made)
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
    reached = readable(rt, actor, ref)
    agent = reached.agent
    if not 1 <= limit <= rules.VERSIONS_LISTED_MAX:
        raise PayloadError(f"limit must be 1-{rules.VERSIONS_LISTED_MAX}", field="limit")
    versions, next_cursor = rt.agents.prompt_versions(agent.id, limit, cursor)
    shown = [v for v in versions if reached.owned or v.version <= reached.runs_version]  # newer: not accepted
    return {"versions": [v.listed(agent.prompt_version) for v in shown], "nextCursor": next_cursor}


def within_accepted(reached: Reach, version: int | None, field: str = "version") -> None:
    """A receiver not following a shared agent's updates reads, loads and pins no version newer than the one it
    accepted."""
    if version is not None and version > reached.runs_version and not reached.owned:
        raise Forbidden(
            f"{field} {version}: this account accepted version {reached.runs_version} of agent {reached.agent.id}; "
            "follow its updates in the console to read newer ones"
        )


def get_prompt(rt: Runtime, actor: Actor, ref: str, version: int | None) -> dict[str, Any]:
    """The version asked for, or the one the caller runs; a receiver not following a shared agent's updates reads
    no further than the version it accepted."""
    if version is not None and version < 1:
        raise PayloadError("version must be 1 or more", field="version")
    reached = readable(rt, actor, ref)
    agent = reached.agent
    wanted = reached.runs_version if version is None else version
    within_accepted(reached, version)
    found = rt.agents.prompt(agent.id, wanted) if wanted else None
    if found is None:
        raise NotFound(
            f"agent {agent.id} has no prompt version {wanted}" if wanted else f"agent {agent.id} has no prompt yet"
        )
    return {"agent": agent.id, **found.public(agent.prompt_version)}


def _seconds_to_midnight(now: Any) -> int:
    tomorrow = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - now).total_seconds()))
