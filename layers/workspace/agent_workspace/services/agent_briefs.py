"""An agent's briefs (issue 18): list, get, update (create or update) and rename, and the person's delete.

An agent connection changes briefs inside a load session of the same agent, at most 40 changes per agent per
day (a rename counts as one), and not while the owner has locked the prompt."""

from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_records import Brief
from agent_workspace.domain.agents import Agent
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import check_plain
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services.agent_sessions import (
    check_session,
    entry,
    in_session,
    rate_refusal,
    session_refusal,
    stale,
    transfer_ended,
)
from agent_workspace.services.agents import editable, find, readable
from agent_workspace.store.agent_writes import AgentWrite, Refused


def list_briefs(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = readable(rt, actor, ref).agent
    return {"agent": agent.id, "briefs": [b.listed() for b in rt.agent_briefs.of_agent(agent.id)]}


def get_brief(rt: Runtime, actor: Actor, ref: str, name: str, revision: int | None) -> dict[str, Any]:
    rules.check_memory_name(name)
    if revision is not None and revision < 1:
        raise PayloadError("revision must be 1 or more", field="revision")
    agent = readable(rt, actor, ref).agent
    current = rt.agent_briefs.get(agent.id, name)
    if current is None:
        raise NotFound(f"agent {agent.id} has no brief {name!r}")
    if revision is None or revision == current.revision:
        return {"agent": agent.id, **current.public()}
    old = rt.agent_briefs.revision(agent.id, current.brief_id, revision) if revision < current.revision else None
    if old is None:
        raise NotFound(f"brief {name!r} has no revision {revision}; its latest is {current.revision}")
    return {"agent": agent.id, **replace(old, name=name).public()}


def update_brief(
    rt: Runtime,
    actor: Actor,
    ref: str,
    name: str,
    body: str,
    session: str | None,
    description: str | None,
    expected_revision: int | None,
    note: str | None,
) -> dict[str, Any]:
    """Without expectedRevision it creates (description required); with it, the next revision."""
    rules.check_memory_name(name)
    rules.check_brief(body)
    if description is not None:
        _check_line(description, rules.MEMORY_DESCRIPTION_MAX, "description")
    if note is not None:
        _check_line(note, rules.NOTE_MAX, "note", plain=False)
    session = _session(actor, session)
    reached = editable(rt, actor, ref, session=session)
    agent, harness = reached.agent, reached.harness
    now = iso(rt.clock())
    write = _write(rt, actor, agent, session)
    try:
        if expected_revision is None:
            if description is None:
                raise PayloadError("description is required to create a brief", field="description")
            brief = Brief(new_id(), agent.id, name, description, body, 1, now, actor.kind, note, harness)
            write.activity(entry(rt, agent.id, "briefs", f"created brief {name!r}", actor, session, harness))
            rt.agent_briefs.create(brief, write, rules.BRIEFS_PER_AGENT)
        else:
            current = rt.agent_briefs.get(agent.id, name, consistent=True)
            if current is None:
                raise NotFound(f"agent {agent.id} has no brief {name!r}; create it without expectedRevision")
            if current.revision != expected_revision:
                raise _stale(current, expected_revision)
            brief = replace(
                current,
                body=body,
                description=description or current.description,
                note=note,
                revision=current.revision + 1,
                updated_at=now,
                updated_by=actor.kind,
                harness=harness,
            )
            summary = f"brief {name!r} revision {brief.revision}" + (f": {note}" if note else "")
            write.activity(entry(rt, agent.id, "briefs", summary, actor, session, harness))
            rt.agent_briefs.replace(brief, write)
    except Refused as refused:
        raise _refusal(rt, actor, agent.id, name, refused.rule, session, expected_revision) from None
    count("AgentBriefWritten")
    return {"agent": agent.id, "name": name, "revision": brief.revision}


def rename_brief(rt: Runtime, actor: Actor, ref: str, name: str, new_name: str, session: str | None) -> dict[str, Any]:
    rules.check_memory_name(name)
    rules.check_memory_name(new_name, "newName")
    session = _session(actor, session)
    reached = editable(rt, actor, ref, session=session)
    agent = reached.agent
    current = rt.agent_briefs.get(agent.id, name, consistent=True)
    if current is None:
        raise NotFound(f"agent {agent.id} has no brief {name!r}")
    write = _write(rt, actor, agent, session)
    summary = f"renamed brief {name!r} to {new_name!r}"
    write.activity(entry(rt, agent.id, "briefs", summary, actor, session, reached.harness))
    try:
        rt.agent_briefs.rename(current, new_name, write)
    except Refused as refused:
        if refused.rule == "exists":
            raise Conflict(f"agent {agent.id} has a brief {new_name!r} already; choose another name") from None
        raise _refusal(rt, actor, agent.id, name, refused.rule, session, current.revision) from None
    return {"agent": agent.id, "name": new_name, "previousName": name, "revision": current.revision}


def delete_brief(rt: Runtime, actor: Actor, ref: str, name: str) -> dict[str, Any]:
    """A person's decision: it destroys every revision for everyone the agent is shared with."""
    agent = find(rt, actor, ref)
    current = rt.agent_briefs.get(agent.id, rules.check_memory_name(name), consistent=True)
    if current is None:
        raise NotFound(f"agent {agent.id} has no brief {name!r}")
    write = rt.agent_briefs.write(agent.id).activity(entry(rt, agent.id, "briefs", f"deleted brief {name!r}", actor))
    try:
        rt.agent_briefs.delete(current, write)
    except Refused:
        raise Conflict(f"brief {name!r} changed meanwhile; read it again") from None
    return {"agent": agent.id, "deleted": name}


def _session(actor: Actor, session: str | None) -> str | None:
    if actor.kind == "agent" and session is None:
        raise PayloadError("session is required: the session load_agent returned for this agent", field="session")
    return check_session(session) if session is not None else None


def _write(rt: Runtime, actor: Actor, agent: Agent, session: str | None) -> AgentWrite:
    """The prompt lock always; for an agent connection, its session and its daily count of brief changes."""
    write = rt.agent_briefs.write(agent.id).unlocked()
    if session is None:
        return write
    now = rt.clock()
    expires = int((now + timedelta(days=2)).timestamp())
    window = f"RATE#brief#{actor.token_id}#{now.strftime('%Y-%m-%d')}"
    return in_session(rt, actor, write, session, agent).counted(window, rules.BRIEF_CHANGES_PER_DAY, expires)


def _stale(current: Brief, expected: int) -> Conflict:
    return stale(f"brief {current.name!r}", current.revision, expected, current.body)


def _refusal(
    rt: Runtime, actor: Actor, agent_id: str, name: str, rule: str, session: str | None, expected: int | None
) -> Exception:
    if rule == "session":
        return session_refusal(rt, actor, agent_id, session)
    if rule == "record":  # the owner read (the session's) may be the one that failed
        ended = transfer_ended(rt, agent_id, session, actor)
        if ended is not None:
            return ended
    if rule == "rate":
        now = rt.clock()
        midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        what = f"this connection changed agent {agent_id}'s briefs {rules.BRIEF_CHANGES_PER_DAY} times today"
        return rate_refusal(
            what,
            rules.BRIEF_CHANGES_PER_DAY,
            "brief changes per agent a day",
            max(1, int((midnight - now).total_seconds())),
        )
    if rule == "record":  # the lock and the cap both ride on the record
        agent = rt.agents.get(agent_id, consistent=True)
        rule = "locked" if agent is None or agent.prompt_locked else "cap"
    if rule == "locked":
        return Conflict(f"the owner locked the prompt of agent {agent_id}; its briefs and profiles are locked with it")
    if rule == "cap":
        return Conflict(f"agent {agent_id} has {rules.BRIEFS_PER_AGENT} briefs, the most it may hold")
    current = rt.agent_briefs.get(agent_id, name, consistent=True)
    if rule == "exists":
        return Conflict(
            f"brief {name!r} exists at revision {current.revision if current else '?'}: read it "
            "(get_agent_brief) and update with expectedRevision"
        )
    if current is None:
        return NotFound(f"brief {name!r} was renamed or deleted meanwhile")
    return _stale(current, expected or 0)


def _check_line(value: str, most: int, field: str, plain: bool = True) -> None:
    if len(value) > most:
        raise PayloadError(f"{field} is {len(value)} characters; at most {most}", field=field)
    if plain:
        check_plain(value, field)
