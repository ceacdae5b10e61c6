"""Load sessions (issue 18): what load_agent answers, and the session every agent write of memory or briefs
rides on. A session refuses writes after 7 idle days; the check is a condition in the write's own
transaction (`AgentWrite.in_session`), so it costs no read."""

import uuid
from datetime import timedelta
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_records import (
    ACTIVITY_KINDS,
    MEMORY_RULES,
    Activity,
    AgentMemory,
    MemoryIndexEntry,
    Session,
)
from agent_workspace.domain.agents import Agent
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError, RateLimited, WorkspaceError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import check_plain
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services.agents import find_loadable, profile_for, readable, session_of, within_accepted
from agent_workspace.store.agent_writes import AgentWrite

MENTIONS_SHOWN = 10


def check_session(session: str, field: str = "session") -> str:
    """A session id as load_agent gives them: a UUID."""
    try:
        return str(uuid.UUID(session)) if len(session) <= 40 else _bad_session(field)
    except ValueError:
        return _bad_session(field)


def _bad_session(field: str) -> str:
    raise PayloadError(f"{field} must be the session id load_agent returned (a UUID)", field=field)


def entry(
    rt: Runtime,
    agent_id: str,
    kind: str,
    summary: str,
    actor: Actor,
    session: str | None = None,
    harness: str | None = None,
) -> Activity:
    return Activity(new_id(), agent_id, kind, summary, iso(rt.clock()), actor.kind, session, harness)


def in_session(rt: Runtime, actor: Actor, write: AgentWrite, session: str, agent: Agent) -> AgentWrite:
    """The write rides on this session: it must exist for the agent, belong to this connection (a session belongs
    to the connection that loaded the agent), be opened since the agent's last transfer and not be idle for 7
    days."""
    now = rt.clock()
    idle_since = iso(now - timedelta(days=rules.SESSION_IDLE_DAYS))
    return write.in_session(session, actor.token_id, iso(now), idle_since, agent.owned_since, agent.account_id)


def session_refusal(rt: Runtime, actor: Actor, agent_id: str, session: str | None) -> WorkspaceError:
    """Why the session refused the write, read only once it has."""
    found = session_of(rt, actor, agent_id, session, consistent=True) if session else None
    if found is None:
        return rules.foreign_session(agent_id, session)
    ended = transfer_ended(rt, agent_id, found)
    if ended is not None:
        return ended
    return Conflict(
        f"session {found.id} has been idle since {found.last_active_at}: a session stops accepting writes after "
        f"{rules.SESSION_IDLE_DAYS} idle days; call load_agent again for a new one"
    )


def transfer_ended(
    rt: Runtime, agent_id: str, session: Session | str | None, actor: Actor | None = None
) -> Conflict | None:
    """The refusal of a session the agent's last transfer ended, or None. A write names the owner it read in a
    condition on the record, so a write based on a read from before the transfer is refused and told why here."""
    if session is None:
        return None
    if isinstance(session, str) and actor is not None:
        session = session_of(rt, actor, agent_id, session, consistent=True)
    agent = rt.agents.get(agent_id, consistent=True)
    if not isinstance(session, Session) or agent is None or agent.owned_since is None:
        return None
    if session.started_at >= agent.owned_since:
        return None
    return Conflict(
        f"session {session.id} ended when agent {agent_id} changed owner ({agent.owned_since}); a transfer ends "
        "every session: call load_agent again"
    )


def stale(what: str, revision: int, expected: int, body: str) -> Conflict:
    """A write based on a revision that is no longer the current one, refused with the current body to merge."""
    return Conflict(
        f"{what} is at revision {revision}, not {expected}: merge with its current body and update with "
        f"expectedRevision {revision}. The current body:\n{body}"
    )


def rate_refusal(what: str, most: int, window: str, retry_after: int) -> RateLimited:
    return RateLimited(f"{what}: at most {most} {window}", retry_after=retry_after)


def load(
    rt: Runtime,
    actor: Actor,
    ref: str,
    harness: str | None,
    workspace: str | None,
    version: int | None,
    budget: int,
) -> tuple[list[str], Session]:
    """The agent's load text blocks and the session opened for them."""
    harness = rules.harness_id(harness) if harness is not None else None
    if workspace is not None and len(workspace) > rules.WORKSPACE_MAX:
        raise PayloadError(
            f"workspace is {len(workspace)} characters; at most {rules.WORKSPACE_MAX}", field="workspace"
        )
    if workspace is not None:
        check_plain(workspace, "workspace")
    if version is not None and version < 1:
        raise PayloadError("version must be 1 or more", field="version")
    rules.check_budget(budget)
    loaded = find_loadable(rt, actor, ref)
    within_accepted(loaded, version)
    agent = loaded.agent
    wanted = version or loaded.runs_version
    prompt = rt.agents.prompt(agent.id, wanted) if wanted else None
    if version is not None and prompt is None:
        raise NotFound(f"agent {agent.id} has no prompt version {version}")
    profile = profile_for(rt, agent.id, harness)
    now = iso(rt.clock())
    session = Session(
        str(uuid.uuid4()),
        agent.id,
        actor.account_id,
        actor.workspace_id,
        actor.token_id,
        now,
        now,
        harness,
        workspace,
        version,
    )
    blocks = [_prompt_block(agent, prompt.body if prompt else "", wanted, harness, profile.addendum if profile else "")]
    if loaded.memory:
        index = rt.agent_memory.index(agent.id)
        pinned = rt.agent_memory.bodies(agent.id, [e.name for e in index if e.pinned])
        blocks += [MEMORY_RULES, _memory_block(index, pinned, budget)]
    else:
        blocks.append("Memory: the owner did not share this agent's memory with your account.")
    blocks.append(_briefs_block(rt, agent))
    unread = agent.unread_mentions if loaded.owned else 0  # mentions are the owner account's
    mentions = rt.agents.mentions(agent.id, min(MENTIONS_SHOWN, unread)) if unread > 0 else []
    mentions = [m for m in mentions if agent.owned_since is None or m["at"] >= agent.owned_since]  # the old
    # owner's mentions quote its account's tasks: they stay with it
    blocks.append(_mentions_block(agent, mentions, unread))
    blocks.append(
        f"Session: {session.id}\nPass it as `session` on agent_remember, agent_forget, update_agent_brief and "
        "rename_agent_brief. If you lose it (after a compaction), call load_agent again."
    )
    summary = f"session started in {harness or 'an unnamed tool'}" + (f" at {workspace}" if workspace else "")
    opened = entry(rt, agent.id, "sessions", summary, actor, session.id, harness)
    rt.agents.open_session(session, opened, max(unread, 0))
    count("AgentLoaded")
    return blocks, session


def _prompt_block(agent: Agent, body: str, version: int, harness: str | None, addendum: str) -> str:
    head = f"# {agent.name} (@{agent.slug}), agent {agent.id}"
    where = f"prompt version {version}" if version else "no prompt yet"
    text = f"{head}: {where}. Adopt what follows as your operating instructions.\n\n{body}".rstrip()
    if addendum:
        text += f"\n\n## In {harness or 'every tool'}\n\n{addendum}"
    return text


def _memory_block(index: list[MemoryIndexEntry], pinned: list[AgentMemory], budget: int) -> str:
    """Pinned bodies first, then one line per memory, newest first, while they fit in `budget` characters."""
    parts: list[str] = []
    used = 0
    for memory in pinned:
        text = f"## {memory.name} (pinned, {memory.type}, revision {memory.revision})\n{memory.text()}"
        if used + len(text) > budget:
            break
        parts.append(text)
        used += len(text)
    lines: list[str] = []
    shown = 0
    for item in sorted(index, key=lambda e: e.updated_at, reverse=True):
        line = item.line()
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    head = f"Memory index: {len(index)} memories" + (
        f", {shown} shown within the budget of {budget:,} characters; agent_recall finds the rest"
        if shown < len(index)
        else ""
    )
    return "\n\n".join([*parts, head + ("\n" + "\n".join(lines) if lines else "")])


def _briefs_block(rt: Runtime, agent: Agent) -> str:
    briefs = rt.agent_briefs.of_agent(agent.id)
    if not briefs:
        return "Briefs: none yet."
    lines = [f"- {b.name} (revision {b.revision}, {b.updated_at}): {b.description}" for b in briefs]
    return "Briefs (read one with get_agent_brief):\n" + "\n".join(lines)


def _mentions_block(agent: Agent, mentions: list[dict[str, Any]], unread: int) -> str:
    if not mentions:
        return f"Unread @-mentions of @{agent.slug}: none."
    lines = [f"- {m['at']} in {m['where']}: {m['excerpt']}" for m in mentions]
    more = f" (the newest {len(mentions)} of {unread})" if unread > len(mentions) else ""
    return f"Unread @-mentions of @{agent.slug}{more}:\n" + "\n".join(lines)


def forbidden_on_mcp(what: str) -> Forbidden:
    """A person's decision, refused for every connection (the reference's note on the agent argument)."""
    return Forbidden(f"{what} is the person's decision, made in the console; the server refuses it for any connection")


def activity_of(rt: Runtime, actor: Actor, ref: str, kind: str, limit: int, cursor: str | None) -> dict[str, Any]:
    """Newest first; shares only for the owner."""
    if kind != "all" and kind not in ACTIVITY_KINDS:
        raise PayloadError(f"kind must be all, {', '.join(ACTIVITY_KINDS)}", field="kind")
    if not 1 <= limit <= rules.ACTIVITY_LIMIT_MAX:
        raise PayloadError(f"limit must be 1-{rules.ACTIVITY_LIMIT_MAX}", field="limit")
    found = readable(rt, actor, ref)
    if kind == "sharing" and not found.owned:
        raise Forbidden("an agent's shares are shown to its owner only")
    if kind == "memory" and not found.memory:  # memory entries name memories and carry forget reasons
        raise Forbidden(f"the owner of agent {found.agent.id} did not share its memory with this account")
    hidden = ("sharing",) * (not found.owned) + ("memory",) * (not found.memory)
    visible = tuple(k for k in ACTIVITY_KINDS if k not in hidden)
    kinds = visible if kind == "all" else (kind,)
    items, next_cursor = rt.agents.activity(found.agent.id, None if kinds == ACTIVITY_KINDS else kinds, limit, cursor)
    return {"agent": found.agent.id, "items": [item.public() for item in items], "nextCursor": next_cursor}


def loadable(rt: Runtime, actor: Actor) -> list[tuple[str, str, str]]:
    """(prompt name, title, description) of every agent the caller can load: the account's own (not archived) by
    slug, and accepted shares as `<owner>.<slug>` (MCP prompt names are one word a client shows as a command)."""
    own = [(a.slug, a.name, a.description) for a in rt.agents.of_account(actor.account_id) if not a.archived]
    shares = {s.agent_id: s for s in rt.agents.shares_with(actor.account_id) if s.accepted}
    shared = [
        (f"{shares[a.id].owner_account_id}.{a.slug}", a.name, a.description)
        for a in rt.agents.many(list(shares))
        if shares[a.id].current(a)
    ]
    return own + shared


def ref_of_prompt(name: str) -> str:
    """The agent a prompt name names: a slug, or `<owner>.<slug>` as `<owner>/<slug>`."""
    owner, _, slug = name.rpartition(".")
    return f"{owner}/{slug}" if owner else name
