"""The board's workspace and project level: the context an agent starts from, projects and epics."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent_workspace.backoff import back_off
from agent_workspace.domain import board
from agent_workspace.domain.board import (
    ARCHIVED_NOTE,
    CYCLES_MAX,
    EPICS_MAX,
    GOAL_MAX,
    PROJECTS_MAX,
    Cycle,
    Epic,
    Policy,
    Project,
    check_date,
    columns_table,
)
from agent_workspace.domain.clock import iso
from agent_workspace.domain.columns import COMPLEXITY, LINK_TYPES, PRIORITIES
from agent_workspace.domain.errors import Conflict, NotFound
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.models import Actor, Workspace
from agent_workspace.domain.tasks import STATUSES, TaskFilter
from agent_workspace.domain.text import check_text, echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import push
from agent_workspace.store.board import CapReached


def context(rt: Runtime, workspace: Workspace) -> dict[str, Any]:
    """The workspace at a glance, the standard first call: one read for the workspace, one for the board. Projects
    and epics by id and title: their texts are read one at a time (`board project`, `board epic`)."""
    board = rt.board.read(workspace.id)
    active = board.active_cycle
    return {
        "workspace": workspace.summary(),
        "statuses": list(STATUSES),
        "columns": columns_table(),
        "archived": ARCHIVED_NOTE,
        "labels": list(board.labels),
        "complexity": list(COMPLEXITY),
        "priorities": list(PRIORITIES),
        "linkTypes": list(LINK_TYPES),
        "projects": [project.listed() for project in board.projects],
        "epics": [epic.listed() for epic in board.epics],
        "activeCycle": active.public(active.id) if active else None,
        "policy": board.policy.public(),
    }


def set_policy(rt: Runtime, workspace_id: str, supervised: bool | None, sign_off: bool | None) -> Policy:
    """The human's policy; a setting left out keeps its value."""
    current = rt.board.policy(workspace_id)
    policy = Policy(
        supervised=current.supervised if supervised is None else supervised,
        sign_off=current.sign_off if sign_off is None else sign_off,
    )
    rt.board.set_policy(workspace_id, policy)
    count("BoardPolicySet")
    return policy


def cycles(rt: Runtime, workspace_id: str) -> list[dict[str, Any]]:
    board = rt.board.read(workspace_id)
    return [cycle.public(board.active_cycle_id) for cycle in board.cycles]


def create_cycle(
    rt: Runtime, actor: Actor, title: str, goal: str, end_date: str | None, active: bool
) -> dict[str, Any]:
    """The human's time-box; made active, it ends the one active before (whose tasks lose their head start)."""
    board.check_heading(title, goal, GOAL_MAX, "goal")
    if end_date is not None:
        check_date(end_date, "endDate")
    previous = rt.board.read(actor.workspace_id).active_cycle_id if active else None
    cycle = Cycle(new_id(), actor.workspace_id, title, goal, iso(rt.clock()), actor.kind, end_date=end_date)
    _within_cap(lambda: rt.board.create_cycle(cycle, CYCLES_MAX, active), "cycles", CYCLES_MAX)
    if previous:
        _rerank(rt, actor, previous, in_active=False)
    count("CycleCreated")
    return cycle.public(cycle.id if active else None)


def activate_cycle(rt: Runtime, actor: Actor, cycle_id: str | None) -> dict[str, Any]:
    """Make a cycle the active one (None: none is); the queue ranks its tasks first from now on."""
    board = rt.board.read(actor.workspace_id)
    if cycle_id is not None and cycle_id not in [c.id for c in board.cycles]:
        raise NotFound(f"no cycle {echo(cycle_id)!r} in this workspace")
    previous = board.active_cycle_id
    if previous != cycle_id:
        rt.board.set_active_cycle(actor.workspace_id, cycle_id)
        with push.coalescing(rt):  # both cycles' tasks: one message
            if previous:
                _rerank(rt, actor, previous, in_active=False)
            if cycle_id:
                _rerank(rt, actor, cycle_id, in_active=True)
    return {"activeCycleId": cycle_id}


def _rerank(rt: Runtime, actor: Actor, cycle_id: str, in_active: bool) -> None:
    """Mark the cycle's unfinished tasks in or out of the active cycle: their queue rank follows. Paged
    through the board's listing; a task someone changes meanwhile is read again. The console hears it once."""
    with push.coalescing(rt):
        _rerank_all(rt, actor, cycle_id, in_active)


def _rerank_all(rt: Runtime, actor: Actor, cycle_id: str, in_active: bool) -> None:
    cursor: str | None = None
    while True:
        page, cursor = rt.tasks.list_filtered(
            actor.workspace_id, None, TaskFilter(cycle_id=cycle_id, include_archived=True), 100, cursor
        )
        for task in page:
            for attempt in range(6):
                current = rt.tasks.get(actor.workspace_id, task.id, consistent=True)
                if current is None or current.cycle_id != cycle_id or current.in_active_cycle == in_active:
                    break
                try:
                    rt.tasks.save(actor.account_id, current, replace(current, in_active_cycle=in_active))
                    push.task_changed(rt, actor.workspace_id, current.id)
                    break
                except Conflict:
                    back_off(attempt)
        if cursor is None:
            return


def project_context(rt: Runtime, actor: Actor, project_id: str) -> dict[str, Any]:
    return _project(rt, actor.workspace_id, project_id).context()


def _project(rt: Runtime, workspace_id: str, project_id: str) -> Project:
    """The project, or NotFound; an id no project could have never reaches a key."""
    project = rt.board.get_project(workspace_id, project_id) if is_id(project_id) else None
    if project is None:
        raise NotFound(f"no project {echo(project_id)!r} in this workspace")
    return project


def update_project(
    rt: Runtime, actor: Actor, project_id: str, expected_revision: int, changes: dict[str, str]
) -> Project:
    """The human's edit of a project's heading or its memory, conventions and decisions: whole texts, replaced,
    refused when someone saved since the revision the editor read (like `memory save` with expectedRevision)."""
    current = _project(rt, actor.workspace_id, project_id)
    if expected_revision != current.revision:
        raise Conflict(
            f"project {project_id} is at revision {current.revision}, not {expected_revision}; read it again"
        )
    for name in ("memory", "conventions", "decisions"):
        if name in changes:
            check_text(changes[name], name, board.PROJECT_DOC_MAX, required=False)
    edited = replace(
        current,
        **changes,
        revision=current.revision + 1,
        updated_at=iso(rt.clock()),
    )
    board.check_heading(edited.title, edited.description)
    rt.board.replace_project(edited, current.revision)
    count("ProjectUpdated")
    return edited


def create_project(rt: Runtime, actor: Actor, title: str, description: str) -> Project:
    board.check_heading(title, description)
    now = iso(rt.clock())
    project = Project(new_id(), actor.workspace_id, title, description, now, actor.kind, updated_at=now)
    _within_cap(lambda: rt.board.create_project(project, PROJECTS_MAX), "projects", PROJECTS_MAX)
    count("ProjectCreated")
    return project


def delete_project(rt: Runtime, actor: Actor, project_id: str) -> None:
    """The human's delete: the project and its texts go, and its place under the cap; tasks keep the id they
    carry (listing by it still finds them), and no new task may name it."""
    if not (is_id(project_id) and rt.board.delete_project(actor.workspace_id, project_id)):
        raise NotFound(f"no project {echo(project_id)!r} in this workspace")
    count("ProjectDeleted")


def epic(rt: Runtime, actor: Actor, epic_id: str) -> Epic:
    """One epic with its description (the context lists epics by id and title)."""
    found = rt.board.get_epic(actor.workspace_id, epic_id) if is_id(epic_id) else None
    if found is None:
        raise NotFound(f"no epic {echo(epic_id)!r} in this workspace")
    return found


def update_epic(rt: Runtime, actor: Actor, epic_id: str, title: str | None, description: str | None) -> Epic:
    """The human's edit of an epic's title or description; what is left out keeps its text."""
    current = epic(rt, actor, epic_id)
    edited = replace(
        current,
        title=current.title if title is None else title,
        description=current.description if description is None else description,
    )
    board.check_heading(edited.title, edited.description)
    rt.board.replace_epic(edited)
    count("EpicUpdated")
    return edited


def delete_epic(rt: Runtime, actor: Actor, epic_id: str) -> None:
    """The human's delete, as `delete_project`: tasks keep the epic's id, no new task may name it."""
    if not (is_id(epic_id) and rt.board.delete_epic(actor.workspace_id, epic_id)):
        raise NotFound(f"no epic {echo(epic_id)!r} in this workspace")
    count("EpicDeleted")


def create_epic(rt: Runtime, actor: Actor, title: str, description: str) -> Epic:
    board.check_heading(title, description)
    epic = Epic(new_id(), actor.workspace_id, title, description, iso(rt.clock()), actor.kind)
    _within_cap(lambda: rt.board.create_epic(epic, EPICS_MAX), "epics", EPICS_MAX)
    count("EpicCreated")
    return epic


def _within_cap(create: Callable[[], None], things: str, most: int) -> None:
    try:
        create()
    except CapReached:
        raise Conflict(f"this workspace has {most} {things} already, the most it may hold") from None
