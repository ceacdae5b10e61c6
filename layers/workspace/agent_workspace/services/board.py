"""The board's workspace and project level: the context an agent starts from, projects and epics."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent_workspace.domain import board
from agent_workspace.domain.board import EPICS_MAX, PROJECTS_MAX, Epic, Policy, Project
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, NotFound
from agent_workspace.domain.ids import is_id, new_id
from agent_workspace.domain.models import Actor, Workspace
from agent_workspace.domain.tasks import STATUSES, check_text
from agent_workspace.domain.text import echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.store.board import CapReached


def context(rt: Runtime, workspace: Workspace) -> dict[str, Any]:
    """The workspace at a glance, the standard first call: one read for the workspace, one for the board."""
    projects, epics, policy = rt.board.read(workspace.id)
    return {
        "workspace": workspace.summary(),
        "statuses": list(STATUSES),
        "columns": board.columns_table(),
        "archived": board.ARCHIVED_NOTE,
        "labels": [],
        "complexity": list(board.COMPLEXITY),
        "priorities": list(board.PRIORITIES),
        "linkTypes": list(board.LINK_TYPES),
        "projects": [project.summary() for project in projects],
        "epics": [epic.public() for epic in epics],
        "activeCycle": None,
        "policy": policy.public(),
    }


def set_policy(rt: Runtime, workspace_id: str, supervised: bool | None, sign_off: bool | None) -> Policy:
    """The human's policy; a setting left out keeps its value."""
    _, _, current = rt.board.read(workspace_id)
    policy = Policy(
        supervised=current.supervised if supervised is None else supervised,
        sign_off=current.sign_off if sign_off is None else sign_off,
    )
    rt.board.set_policy(workspace_id, policy)
    count("BoardPolicySet")
    return policy


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
