"""The workspace's memory: load, save with optional optimistic concurrency, delete."""

from typing import Any

from agent_workspace.backoff import back_off
from agent_workspace.domain import paging
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, NotFound, Unavailable
from agent_workspace.domain.memory import INDEX, REVISIONS_KEPT, Memory, check_content, check_name, uri_of
from agent_workspace.domain.models import Actor
from agent_workspace.domain.resources import ResourceInfo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime

_RACE_ROUNDS = 6


def load(rt: Runtime, workspace_id: str, name: str | None, revision: int | None) -> dict[str, Any] | str:
    name = check_name(name)
    if revision is not None:
        kept = rt.memory.get_revision(workspace_id, name, revision)
        if kept is None:
            raise NotFound(f"memory://{name} has no revision {revision}: the last {REVISIONS_KEPT} revisions are kept")
        return kept.public()
    memory = rt.memory.get(workspace_id, name)
    if memory is None:
        hint = " Save one with the names of the other memories, as memory://<name> links." if name == INDEX else ""
        return f"nothing is saved in memory://{name} yet.{hint}"
    return memory.public()


def save(rt: Runtime, actor: Actor, name: str | None, content: str, expected_revision: int | None) -> Memory:
    """Replace the whole memory. With `expected_revision`, only on top of that revision; a stale one
    is refused with the current revision and content, so the agent can merge instead of overwrite."""
    name = check_name(name)
    check_content(content)
    for attempt in range(_RACE_ROUNDS):
        current = rt.memory.get(actor.workspace_id, name, consistent=True)
        at = current.revision if current else 0
        if expected_revision is not None and expected_revision != at:
            raise _stale(name, expected_revision, current)
        memory = Memory(name, content, at + 1, iso(rt.clock()), actor.token_id)
        try:
            rt.memory.put(actor.workspace_id, memory, at)
        except Conflict:
            if expected_revision is not None:
                continue  # re-read: the refusal then carries what won
            back_off(attempt)
            continue
        count("MemorySaved")
        return memory
    raise Unavailable(f"memory://{name} is being saved by others; retry shortly")


def delete(rt: Runtime, workspace_id: str, name: str | None) -> str:
    name = check_name(name)
    if rt.memory.delete(workspace_id, name):
        return f"memory://{name} deleted"
    return f"nothing was saved in memory://{name}; nothing to delete"


def list_memories(rt: Runtime, workspace_id: str) -> list[dict[str, Any]]:
    return [
        {
            "name": m.name,
            "uri": f"memory://{m.name}",
            "revision": m.revision,
            "updatedAt": m.updated_at,
            "size": len(m.content.encode("utf-8")),
        }
        for m in rt.memory.list_all(workspace_id)
    ]


# -- MCP resources ------------------------------------------------------------------------------

RESOURCE_PAGE = 50  # memories per `resources/list` page: at most 16 KiB each read, well under a Query's 1 MB


def get(rt: Runtime, workspace_id: str, name: str) -> Memory:
    """The current memory `name` (MEMORY.md: the index), as `load` reads it; `NotFound` when nothing is saved."""
    memory = rt.memory.get(workspace_id, check_name(name))
    if memory is None:
        raise NotFound(f"nothing is saved in {uri_of(name)} yet")
    return memory


def resource_page(rt: Runtime, workspace_id: str, cursor: str | None, budget: int) -> tuple[list[dict], str | None]:
    """A page of the workspace's memories as resources (`ResourceInfo.public`), within `budget` bytes."""
    found, next_cursor = rt.memory.list_page(workspace_id, RESOURCE_PAGE, cursor)
    return paging.fill(
        found,
        next_cursor,
        budget=budget,
        shown=lambda memory: _resource(memory).public(),
        cursor_after=lambda memory: rt.memory.listing_cursor(workspace_id, memory.name),
        name=lambda memory: uri_of(memory.name),
    )


def _resource(memory: Memory) -> ResourceInfo:
    index = memory.name == INDEX
    return ResourceInfo(
        uri=uri_of(memory.name),
        name=memory.name,
        title="Memory index" if index else f"Memory {memory.name}",
        description=(
            "The index of this workspace's memories, linking each as memory://<name>"
            if index
            else f"A note this workspace's agents keep (revision {memory.revision}, saved {memory.updated_at})"
        ),
        mime_type="text/markdown",
        size=len(memory.content.encode("utf-8")),
    )


def _stale(name: str, expected: int, current: Memory | None) -> Conflict:
    if current is None:
        return Conflict(
            f"memory://{name} is not at revision {expected}: nothing is saved there (revision 0). "
            "Save again with expectedRevision 0, or without expectedRevision."
        )
    return Conflict(
        f"memory://{name} is at revision {current.revision}, not {expected}: another agent saved it meanwhile. "
        f"Merge your change into its current content and save again with expectedRevision {current.revision}.\n"
        f"Current content (revision {current.revision}):\n{current.content}"
    )
