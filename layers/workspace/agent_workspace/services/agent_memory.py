"""An agent's memory (issue 18): agent_recall, agent_remember and agent_forget, and the person's pin and restore.

Recall reads the body-less index (one Query) to choose and order the candidates, then their bodies in batches
of 100, examining at most `RECALL_EXAMINED` bodies a call for a word search; the cursor resumes after the last
one examined. No Scan, no unbounded read: 2,000 memories bound the index, the examined cap bounds the bodies.
"""

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from agent_workspace.domain import agents as rules
from agent_workspace.domain.agent_records import AgentMemory, MemoryIndexEntry
from agent_workspace.domain.agents import Agent
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, Forbidden, NotFound, PayloadError
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.paging import PAGE_BYTES, wire_size
from agent_workspace.domain.text import check_plain, echo
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
from agent_workspace.services.agents import Reach, readable
from agent_workspace.store.agent_writes import AgentWrite, Refused

RECALL_EXAMINED = 300  # bodies a word search reads per call, at most
SORTS = ("recent", "name", "type")


def _memory_reach(rt: Runtime, actor: Actor, ref: str, write: bool, session: str | None = None) -> Reach:
    found = readable(rt, actor, ref, session)
    if not found.memory:
        raise Forbidden(f"the owner of agent {found.agent.id} did not share its memory with this account")
    if write and not found.can_edit:
        raise Forbidden(f"agent {found.agent.id}'s memory is shared with this account to read, not to edit")
    return found


def recall(
    rt: Runtime,
    actor: Actor,
    ref: str,
    query: str | None,
    name: str | None,
    memory_type: str | None,
    written_by: str | None,
    sort: str,
    limit: int,
    cursor: str | None,
) -> dict[str, Any]:
    if query is not None and len(query) > rules.RECALL_QUERY_MAX:
        raise PayloadError(f"query is {len(query)} characters; at most {rules.RECALL_QUERY_MAX}", field="query")
    if memory_type is not None and memory_type not in rules.MEMORY_TYPES:
        raise PayloadError(f"type must be one of {', '.join(rules.MEMORY_TYPES)}", field="type")
    if written_by is not None and written_by not in rules.MEMORY_WRITERS:
        raise PayloadError(f"writtenBy must be one of {', '.join(rules.MEMORY_WRITERS)}", field="writtenBy")
    if sort not in SORTS:
        raise PayloadError(f"sort must be one of {', '.join(SORTS)}", field="sort")
    if not 1 <= limit <= rules.RECALL_LIMIT_MAX:
        raise PayloadError(f"limit must be 1-{rules.RECALL_LIMIT_MAX}", field="limit")
    agent = _memory_reach(rt, actor, ref, write=False).agent
    if name is not None:
        rules.check_memory_name(name)
        memory = rt.agent_memory.get(agent.id, name)
        found = [memory] if memory and _matches(memory, query, memory_type, written_by) else []
        return {"agent": agent.id, "memories": [m.public() for m in found], "nextCursor": None}
    filters = _fingerprint(query, memory_type, written_by, sort)
    sort_key = _SORT_KEYS[sort]
    descending = sort == "recent"
    candidates = sorted(
        (e for e in rt.agent_memory.index(agent.id) if _listed(e, memory_type, written_by)),
        key=sort_key,
        reverse=descending,
    )
    position = _resume(cursor, filters, candidates, sort_key, descending)
    words = (query or "").lower().split()
    shown: list[dict[str, Any]] = []
    size = examined = 0
    full = False
    while not full and position < len(candidates) and examined < RECALL_EXAMINED:
        batch = candidates[position : position + min(100, RECALL_EXAMINED - examined)]
        bodies = {m.name: m for m in rt.agent_memory.bodies(agent.id, [e.name for e in batch])}
        for listed in batch:
            memory = bodies.get(listed.name)
            if memory is not None and (not words or _has_words(memory, words)):
                public = memory.public()
                if shown and size + wire_size(public) > PAGE_BYTES:  # the rest waits for the next page
                    full = True
                    break
                shown.append(public)
                size += wire_size(public)
            position += 1
            examined += 1
            if len(shown) == limit:
                full = True
                break
    more = position < len(candidates)
    next_cursor = _cursor(filters, sort_key(candidates[position - 1])) if more and position else None
    return {"agent": agent.id, "memories": shown, "nextCursor": next_cursor}


def _listed(listed: MemoryIndexEntry, memory_type: str | None, written_by: str | None) -> bool:
    return (memory_type is None or listed.type == memory_type) and (
        written_by is None or listed.written_by == written_by
    )


def _matches(memory: AgentMemory, query: str | None, memory_type: str | None, written_by: str | None) -> bool:
    if memory_type is not None and memory.type != memory_type:
        return False
    if written_by is not None and memory.written_by != written_by:
        return False
    return not query or _has_words(memory, query.lower().split())


def _has_words(memory: AgentMemory, words: list[str]) -> bool:
    text = f"{memory.name}\n{memory.description}\n{memory.text()}".lower()
    return all(word in text for word in words)


SortKey = tuple[str, str]
_SORT_KEYS: dict[str, Callable[[MemoryIndexEntry], SortKey]] = {
    "recent": lambda e: (e.updated_at, e.name),
    "name": lambda e: ("", e.name),
    "type": lambda e: (e.type, e.name),
}


def _fingerprint(*filters: Any) -> str:
    return hashlib.sha256(json.dumps(filters).encode()).hexdigest()[:12]


def _cursor(filters: str, after: SortKey) -> str:
    return base64.urlsafe_b64encode(json.dumps([filters, *after]).encode()).decode().rstrip("=")


def _resume(
    cursor: str | None,
    filters: str,
    candidates: list[MemoryIndexEntry],
    sort_key: Callable[[MemoryIndexEntry], SortKey],
    descending: bool,
) -> int:
    """The position after the memory the cursor names, in the order the same filters give now."""
    if not cursor:
        return 0
    try:
        given, *after = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        valid = given == filters and len(after) == 2 and all(isinstance(v, str) for v in after)
    except (ValueError, TypeError):
        valid = False
    if not valid:
        raise PayloadError("cursor is not one agent_recall returned for these filters", field="cursor")
    last = (after[0], after[1])
    if descending:
        return sum(1 for e in candidates if sort_key(e) >= last)
    return sum(1 for e in candidates if sort_key(e) <= last)


def remember(
    rt: Runtime,
    actor: Actor,
    ref: str,
    session: str | None,
    name: str,
    body: str,
    mode: str,
    memory_type: str | None,
    description: str | None,
    expected_revision: int | None,
) -> dict[str, Any]:
    """create, update or append, inside a load session for an agent connection (a person writes without one)."""
    if mode not in ("create", "update", "append"):
        raise PayloadError("mode must be create, update or append", field="mode")
    rules.check_memory_name(name)
    if len(body) > rules.MEMORY_BODY_MAX:
        raise PayloadError(f"body is {len(body):,} characters; at most {rules.MEMORY_BODY_MAX:,}", field="body")
    if not body.strip():
        raise PayloadError("body must not be empty", field="body")
    if memory_type is not None and memory_type not in rules.MEMORY_TYPES:
        raise PayloadError(f"type must be one of {', '.join(rules.MEMORY_TYPES)}", field="type")
    if description is not None:
        _check_description(description)
    if expected_revision is not None and expected_revision < 1:
        raise PayloadError("expectedRevision must be 1 or more", field="expectedRevision")
    if actor.kind == "agent" and session is None:
        raise PayloadError("session is required: call load_agent for one", field="session")
    session = check_session(session) if session is not None else None
    found = _memory_reach(rt, actor, ref, write=True, session=session)
    agent, harness = found.agent, found.harness
    now = rt.clock()
    write = _write(rt, actor, agent, session)
    write.activity(entry(rt, agent.id, "memory", f"memory {name!r}: {mode}", actor, session, harness))
    writer = "people" if actor.kind == "human" else ("agent" if found.owned else "collaborators")
    try:
        if mode == "append":
            paragraph = f"[{now.strftime('%Y-%m-%d')}] {body}"
            rt.agent_memory.append(agent.id, name, paragraph, iso(now), rules.MEMORY_BODY_MAX, write, session, harness)
            result: dict[str, Any] = {"name": name, "mode": "append", "appended": paragraph}
        elif mode == "create":
            if memory_type is None or description is None:
                missing = "type" if memory_type is None else "description"
                raise PayloadError(f"{missing} is required to create a memory", field=missing)
            memory = AgentMemory(
                new_id(),
                agent.id,
                name,
                memory_type,
                description,
                body,
                1,
                writer,
                iso(now),
                iso(now),
                session_id=session,
                harness=harness,
            )
            try:
                rt.agent_memory.create(memory, write, rules.MEMORIES_PER_AGENT)
            except Refused as refused:
                if refused.rule != "exists" or not _own_write(rt, memory):
                    raise
            result = {"name": name, "mode": "create", "id": memory.id, "revision": 1}
        else:
            if expected_revision is None:
                raise PayloadError(
                    "expectedRevision is required to update: the revision you read", field="expectedRevision"
                )
            current = rt.agent_memory.get(agent.id, name, consistent=True)
            if current is None:
                raise NotFound(f"agent {agent.id} has no memory {name!r}; create it")
            if current.revision != expected_revision:
                raise _stale(current, expected_revision)
            memory = replace(
                current,
                body=body,
                appended=[],
                type=memory_type or current.type,
                description=description if description is not None else current.description,
                revision=current.revision + 1,
                written_by=writer,
                updated_at=iso(now),
                session_id=session,
                harness=harness,
            )
            rt.agent_memory.replace(memory, current, write)
            result = {"name": name, "mode": "update", "id": memory.id, "revision": memory.revision}
    except Refused as refused:
        raise _refusal(rt, actor, agent.id, name, refused.rule, session, expected_revision) from None
    count("AgentMemoryWritten")
    return {"agent": agent.id, **result}


def forget(
    rt: Runtime, actor: Actor, ref: str, session: str | None, name: str | None, memory_id: str | None, reason: str
) -> dict[str, Any]:
    """Out of the memory, restorable by a person for 30 days."""
    if not reason.strip() or len(reason) > rules.FORGET_REASON_MAX:
        raise PayloadError(f"reason must be 1-{rules.FORGET_REASON_MAX} characters", field="reason")
    if (name is None) == (memory_id is None):
        raise PayloadError("give either name or id (the memory's id from agent_recall)", field="name")
    if actor.kind == "agent" and session is None:
        raise PayloadError("session is required: call load_agent for one", field="session")
    session = check_session(session) if session is not None else None
    found = _memory_reach(rt, actor, ref, write=True, session=session)
    agent = found.agent
    if memory_id is not None:
        name = rt.agent_memory.name_of_id(agent.id, memory_id) if is_id(memory_id) else None
        if name is None:
            raise NotFound(f"agent {agent.id} has no memory with id {echo(memory_id)}")
    assert name is not None
    rules.check_memory_name(name)
    memory = rt.agent_memory.get(agent.id, name, consistent=True)
    if memory is None:
        raise NotFound(f"agent {agent.id} has no memory {name!r}")
    now = rt.clock()
    expires = int((now + timedelta(days=rules.FORGOTTEN_KEPT_DAYS)).timestamp())
    write = _write(rt, actor, agent, session)
    write.activity(entry(rt, agent.id, "memory", f"forgot {name!r}: {reason}", actor, session, found.harness))
    try:
        rt.agent_memory.forget(memory, reason, iso(now), expires, write)
    except Refused as refused:
        raise _refusal(rt, actor, agent.id, name, refused.rule, session, memory.revision) from None
    count("AgentMemoryForgotten")
    restorable = iso(now + timedelta(days=rules.FORGOTTEN_KEPT_DAYS))
    return {"agent": agent.id, "forgotten": name, "id": memory.id, "restorableUntil": restorable}


def _write(rt: Runtime, actor: Actor, agent: Agent, session: str | None) -> AgentWrite:
    """The write, riding on the session and its hourly count when an agent writes."""
    write = rt.agent_memory.write(agent.id)
    if session is None:
        return write
    now = rt.clock()
    hour = now.strftime("%Y-%m-%dT%H")
    expires = int((now + timedelta(hours=2)).timestamp())
    in_session(rt, actor, write, session, agent).counted(
        f"RATE#memory#{session}#{hour}", rules.MEMORY_WRITES_PER_HOUR, expires
    )
    connection = f"RATE#memory-connection#{actor.token_id}#{hour}"
    return write.counted(connection, rules.MEMORY_WRITES_PER_CONNECTION_HOUR, expires, "connection-rate")


def _own_write(rt: Runtime, memory: AgentMemory) -> bool:
    """The memory in the way is this very write, committed by an attempt whose answer was lost and applied again
    by the retry (the id is new per write; AWS would not apply a retry with the call's ClientRequestToken again,
    the local stack's moto does)."""
    current = rt.agent_memory.get(memory.agent_id, memory.name, consistent=True)
    return current is not None and current.id == memory.id


def _stale(current: AgentMemory, expected: int) -> Conflict:
    return stale(f"memory {current.name!r}", current.revision, expected, current.text())


def _refusal(
    rt: Runtime, actor: Actor, agent_id: str, name: str, rule: str, session: str | None, expected: int | None
) -> Exception:
    if rule == "session":
        return session_refusal(rt, actor, agent_id, session)
    if rule == "record":  # the owner read (the session's) and the cap both ride on the record
        ended = transfer_ended(rt, agent_id, session, actor)
        if ended is not None:
            return ended
        rule = "cap"
    if rule in ("rate", "connection-rate"):
        now = rt.clock()
        left = max(1, 3600 - now.minute * 60 - now.second)
        if rule == "rate":
            return rate_refusal(f"session {session}", rules.MEMORY_WRITES_PER_HOUR, "memory writes an hour", left)
        return rate_refusal(
            f"this connection, across its sessions of agent {agent_id}",
            rules.MEMORY_WRITES_PER_CONNECTION_HOUR,
            f"memory writes an hour; retry in {left} seconds",
            left,
        )
    if rule == "exists":
        current = rt.agent_memory.get(agent_id, name, consistent=True)
        revision = current.revision if current else "?"
        return Conflict(f"memory {name!r} exists at revision {revision}: read it (agent_recall) and update instead")
    if rule == "cap":
        return Conflict(f"agent {agent_id} holds {rules.MEMORIES_PER_AGENT:,} memories, the most it may; forget some")
    if rule == "append":
        if rt.agent_memory.get(agent_id, name, consistent=True) is None:
            return NotFound(f"agent {agent_id} has no memory {name!r}; create it")
        return Conflict(
            f"memory {name!r} would pass {rules.MEMORY_BODY_MAX:,} characters with this paragraph; update it shorter"
        )
    current = rt.agent_memory.get(agent_id, name, consistent=True)
    if current is None:
        return NotFound(f"memory {name!r} was forgotten meanwhile")
    return _stale(current, expected or 0)


def _check_description(description: str) -> None:
    if len(description) > rules.MEMORY_DESCRIPTION_MAX:
        raise PayloadError(
            f"description is {len(description)} characters; at most {rules.MEMORY_DESCRIPTION_MAX}", field="description"
        )
    check_plain(description, "description")


def pin(rt: Runtime, actor: Actor, ref: str, name: str, pinned: bool) -> dict[str, Any]:
    """A person's decision: pinned bodies load first, whole."""
    agent = _memory_reach(rt, actor, ref, write=True).agent
    memory = rt.agent_memory.get(agent.id, rules.check_memory_name(name), consistent=True)
    if memory is None:
        raise NotFound(f"agent {agent.id} has no memory {name!r}")
    write = rt.agent_memory.write(agent.id)
    write.activity(entry(rt, agent.id, "memory", f"{'pinned' if pinned else 'unpinned'} {name!r}", actor))
    try:
        rt.agent_memory.pin(memory, pinned, write)
    except Refused:
        raise NotFound(f"memory {name!r} was forgotten meanwhile") from None
    return {"agent": agent.id, "name": name, "pinned": pinned}


def forgotten(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    agent = _memory_reach(rt, actor, ref, write=False).agent
    now = int(rt.clock().timestamp())
    kept = [item for item in rt.agent_memory.forgotten(agent.id) if int(item.get("expiresAt", 0)) > now]
    shown = [
        {k: item.get(k) for k in ("id", "name", "type", "description", "reason", "forgottenAt")}
        | {"restorableUntil": iso(rt.clock().fromtimestamp(int(item["expiresAt"]), rt.clock().tzinfo))}
        for item in kept
    ]
    return {"agent": agent.id, "forgotten": shown}


def restore(rt: Runtime, actor: Actor, ref: str, memory_id: str) -> dict[str, Any]:
    """A person's decision: a forgotten memory back, within 30 days, if its name is free."""
    agent = _memory_reach(rt, actor, ref, write=True).agent
    write = rt.agent_memory.write(agent.id)
    try:
        memory = rt.agent_memory.restore(
            agent.id,
            memory_id,
            rules.MEMORIES_PER_AGENT,
            int(rt.clock().timestamp()),
            write.activity(entry(rt, agent.id, "memory", f"restored memory {memory_id}", actor)),
        )
    except LookupError:
        raise NotFound(f"agent {agent.id} has no forgotten memory {echo(memory_id)} (30 days have passed?)") from None
    except Refused as refused:
        if refused.rule == "exists":
            raise Conflict("a memory of that name exists again; forget or rename it first") from None
        if refused.rule == "cap":
            raise Conflict(f"agent {agent.id} holds {rules.MEMORIES_PER_AGENT:,} memories already") from None
        raise NotFound(f"memory {memory_id} was restored or expired meanwhile") from None
    return {"agent": agent.id, "restored": memory.public()}
