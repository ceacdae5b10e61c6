"""The board's side of tasks (decision 0008): authoring, the execution loop, links, comments, the human's triage
and review. Status changes go through `tasks.change_status`, edits that keep the status through `_edit`:
both write the task only if it is still as read, with its activity entries, in one transaction.
"""

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.backoff import back_off
from agent_workspace.domain.board import LABEL_MAX, LABELS_MAX, LABELS_PER_TASK, Board, check_date
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.columns import (
    COMPLEXITY,
    INVERSE_LINK,
    LINK_TYPES,
    NEEDS_YOU_COLUMNS,
    PLANNING_COLUMNS,
    PRIORITIES,
    STATUS_OF,
    Complexity,
    Priority,
    changes_the_inbox,
)
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError, Unavailable
from agent_workspace.domain.ids import check_id, is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import (
    STATUSES,
    TEXT_MAX,
    Criterion,
    Entry,
    Link,
    Task,
    TaskFilter,
)
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX, check_text, echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, notifications, push
from agent_workspace.services.agent_mentions import note_mentions
from agent_workspace.services.tasks import change_status, resolve

CRITERIA_MAX = 30
CRITERION_MAX = 2000
SUMMARY_MAX = 4000
NOTE_MAX = 4000
QUESTIONS_MAX = 10
QUESTION_MAX = 2000
REASON_MAX = 2000
LINKS_MAX = 50  # per task: a completion rewrites the tasks it blocks in its own transaction (100 items)
BLOCKS_WALK_MAX = 200  # tasks a new `blocks` link reads, down the line, to see it closes no cycle
PARENT_WALK_MAX = 20  # parents a new parentId reads, up the line, to see the task is not its own ancestor
SUGGESTIONS_MAX = 10
FEED_SHOWN = 50  # newest activity entries and comments a task's read shows
_ROUNDS = 6
ID_EXAMPLE = "an id, e.g. '0kGpezGeuxt'"


# -- what an author sends ------------------------------------------------------------------------


@dataclass(frozen=True)
class Fields:
    """The board fields of a create or an edit; `given` names those sent (None then clears, on an edit)."""

    summary: str | None = None
    criteria: list[str] | None = None
    complexity: str | None = None
    priority: str | None = None
    labels: list[str] | None = None
    due_date: str | None = None
    project_id: str | None = None
    epic_id: str | None = None
    cycle_id: str | None = None
    parent_id: str | None = None
    assignee: str | None = None
    given: frozenset[str] = field(default_factory=frozenset)


class FieldsIn(BaseModel):
    """The board fields as agents (MCP) and the human (REST) send them; on an edit, null clears a field."""

    model_config = ConfigDict(extra="forbid", strict=True)

    summary: str | None = Field(None, description="One paragraph: what done looks like")
    criteria: list[str] | None = Field(
        None, description=f"Acceptance criteria, at most {CRITERIA_MAX}; each gets an index from 0"
    )
    complexity: Complexity | None = Field(None, description=f"One of {', '.join(COMPLEXITY)}")
    priority: Priority | None = Field(None, description=f"One of {', '.join(PRIORITIES)}")
    labels: list[str] | None = Field(None, description="Label names; new ones join the workspace's label set")
    dueDate: str | None = Field(None, description="YYYY-MM-DD")
    epicId: str | None = Field(None, description=f"An epic of the board ({ID_EXAMPLE})")
    projectId: str | None = Field(None, description="A project of the board; none: the task belongs to no project")
    cycleId: str | None = Field(None, description="A cycle, or 'active' for the one running now")
    parentId: str | None = Field(None, description="Makes this a subtask of that task (id or identifier)")
    assignee: str | None = Field(
        None,
        description=(
            "'agent' (default: any agent), 'human' (or the human's e-mail address, as set for notifications), or "
            "one agent token's id (that agent only)"
        ),
    )

    def fields(self) -> Fields:
        given = self.model_fields_set & set(FIELD_NAMES)
        return Fields(
            summary=self.summary,
            criteria=self.criteria,
            complexity=self.complexity,
            priority=self.priority,
            labels=self.labels,
            due_date=self.dueDate,
            project_id=self.projectId,
            epic_id=self.epicId,
            cycle_id=self.cycleId,
            parent_id=self.parentId,
            assignee=self.assignee,
            given=frozenset(FIELD_NAMES[name] for name in given),
        )


FIELD_NAMES = {
    "summary": "summary",
    "criteria": "criteria",
    "complexity": "complexity",
    "priority": "priority",
    "labels": "labels",
    "dueDate": "due_date",
    "epicId": "epic_id",
    "projectId": "project_id",
    "cycleId": "cycle_id",
    "parentId": "parent_id",
    "assignee": "assignee",
}


def _checked(rt: Runtime, actor: Actor, board: Board, fields: Fields, task_id: str | None) -> dict[str, Any]:
    """The Task field values the given fields set, each checked; the first problem is refused, naming it."""
    given, out = fields.given, dict[str, Any]()
    if "summary" in given:
        if fields.summary is not None:
            check_text(fields.summary, "summary", SUMMARY_MAX, required=False)
        out["summary"] = fields.summary or None
    if "criteria" in given:
        out["criteria"] = _criteria(fields.criteria or [])
    for name, vocabulary in (("complexity", COMPLEXITY), ("priority", PRIORITIES)):
        if name in given:
            value = getattr(fields, name)
            if value is not None and value not in vocabulary:
                raise PayloadError(f"{name} must be one of {', '.join(vocabulary)}", field=name)
            out[name] = value
    if "labels" in given:
        out["labels"] = _labels(fields.labels or [], board)
    if "due_date" in given:
        out["due_date"] = _due_date(fields.due_date)
    for name, wire, things in (
        ("project_id", "projectId", [p.id for p in board.projects]),
        ("epic_id", "epicId", [e.id for e in board.epics]),
    ):
        if name in given:
            value = getattr(fields, name)
            if value is not None and value not in things:
                raise PayloadError(f"{wire} {echo(value)!r} is not a {wire[:-2]} of this workspace", field=wire)
            out[name] = value
    if "cycle_id" in given:
        cycle = fields.cycle_id
        if cycle == "active":
            if board.active_cycle_id is None:
                raise PayloadError("cycleId 'active': no cycle is active in this workspace", field="cycleId")
            cycle = board.active_cycle_id
        elif cycle is not None and cycle not in [c.id for c in board.cycles]:
            raise PayloadError(f"cycleId {echo(cycle)!r} is not a cycle of this workspace", field="cycleId")
        out["cycle_id"], out["in_active_cycle"] = cycle, cycle is not None and cycle == board.active_cycle_id
    if "parent_id" in given and fields.parent_id is not None:
        parent = resolve(rt, actor.workspace_id, fields.parent_id)
        if parent == task_id:
            raise PayloadError("parentId is the task itself", field="parentId")
        if rt.tasks.get(actor.workspace_id, parent) is None:
            raise PayloadError(f"parentId {echo(fields.parent_id)!r} is not a task of this workspace", field="parentId")
        if task_id is not None:
            _no_parent_cycle(rt, actor, task_id, parent)
        out["parent_id"] = parent
    elif "parent_id" in given:
        out["parent_id"] = None
    if "assignee" in given:
        out.update(_assignee(rt, actor, fields.assignee or "agent"))
    return out


def _board_for(rt: Runtime, actor: Actor, fields: Fields) -> Board:
    """The part of the board the fields name (one read, whatever the board's size)."""
    cycle = fields.cycle_id if fields.cycle_id != "active" else None
    return rt.board.for_task(actor.workspace_id, fields.project_id, fields.epic_id, cycle)


def _no_parent_cycle(rt: Runtime, actor: Actor, task_id: str, parent: str) -> None:
    """Refused when `parent` is `task_id` itself or one of its subtasks down the line (walked up from `parent`,
    one read per level, at most PARENT_WALK_MAX), or when the line above `parent` is longer than that."""
    current: str | None = parent
    for _ in range(PARENT_WALK_MAX):
        found = rt.tasks.relations(actor.workspace_id, [current]).get(current) if current else None
        current = found[1] if found else None
        if current is None:
            return
        if current == task_id:
            raise PayloadError(
                f"parentId {parent} is a subtask of task {task_id} down the line: the parents would form a cycle",
                field="parentId",
            )
    raise PayloadError(
        f"parentId {parent} has more than {PARENT_WALK_MAX} parents above it: a new parent is checked for a cycle "
        f"within {PARENT_WALK_MAX} levels; nest it higher up",
        field="parentId",
    )


def _no_blocks_cycle(rt: Runtime, actor: Actor, task_id: str, other: Task) -> None:
    """Refused when `other` already blocks `task_id` down the line, so `task_id blocks other` would close a cycle
    whose tasks wait on each other forever: a walk along `blocks` links from `other`, one BatchGetItem per step,
    reading at most BLOCKS_WALK_MAX tasks (past that, refused: the bound is in the text)."""
    seen = {other.id}
    frontier = [link.task_id for link in other.links if link.type == "blocks"]
    while frontier:
        if task_id in frontier:
            raise Conflict(
                f"task {other.id} blocks task {task_id} already, down the line: a link of task {task_id} "
                f"blocking task {other.id} would close a cycle, and they would wait on each other forever"
            )
        fresh = [t for t in dict.fromkeys(frontier) if t not in seen]
        seen.update(fresh)
        if len(seen) > BLOCKS_WALK_MAX:
            raise Conflict(
                f"task {other.id} blocks more than {BLOCKS_WALK_MAX} tasks down the line: a new blocks link is "
                f"checked for a cycle within {BLOCKS_WALK_MAX} tasks; unlink some, or link fewer in a chain"
            )
        found = rt.tasks.relations(actor.workspace_id, fresh) if fresh else {}
        frontier = [link.task_id for links, _ in found.values() for link in links if link.type == "blocks"]
        frontier = [t for t in frontier if t not in seen or t == task_id]


def _criteria(texts: list[str]) -> tuple[Criterion, ...]:
    if len(texts) > CRITERIA_MAX:
        raise PayloadError(f"criteria has {len(texts)} items; at most {CRITERIA_MAX}", field="criteria")
    for index, text in enumerate(texts):
        check_text(text, f"criteria[{index}]", CRITERION_MAX)
    return tuple(Criterion(index, text) for index, text in enumerate(texts))


def _labels(labels: list[str], board: Board) -> tuple[str, ...]:
    if len(labels) > LABELS_PER_TASK:
        raise PayloadError(f"labels has {len(labels)} items; at most {LABELS_PER_TASK}", field="labels")
    shown: list[str] = []
    for index, label in enumerate(labels):
        check_text(label, f"labels[{index}]", LABEL_MAX, plain=True)
        if label.strip() not in shown:
            shown.append(label.strip())
    new = set(shown) - set(board.labels)
    if len(board.labels) + len(new) > LABELS_MAX:
        raise PayloadError(f"this workspace has {len(board.labels)} labels; at most {LABELS_MAX}", field="labels")
    return tuple(shown)


def _due_date(value: str | None) -> str | None:
    return None if value is None else check_date(value, "dueDate")


def _assignee(rt: Runtime, actor: Actor, assignee: str) -> dict[str, Any]:
    """`human`, `agent` (any of the workspace's agents), or one agent token's id (that agent only). The human is
    also named by the e-mail address they set in their notification settings, in any case (Masaro's "assignee by
    name or email"): the one person's address the account knows; it holds no person's name."""
    if assignee in ("human", "agent"):
        return {"assignee": assignee, "assigned_token": None}
    if is_id(assignee) and rt.accounts.has_agent_token(actor.account_id, actor.workspace_id, assignee):
        return {"assignee": "agent", "assigned_token": assignee}
    if "@" in assignee and _is_the_humans_address(rt, actor.account_id, assignee):
        return {"assignee": "human", "assigned_token": None}
    raise PayloadError(
        f"assignee must be 'human', 'agent', the id of one of this workspace's agent tokens or the human's e-mail "
        f"address as set in their notification settings, not {echo(assignee)!r}",
        field="assignee",
    )


def _is_the_humans_address(rt: Runtime, account_id: str, given: str) -> bool:
    """Read only for an assignee that could be an address: no other create or edit pays for it."""
    address = (rt.notifications.settings(account_id) or {}).get("email")
    return isinstance(address, str) and address.casefold() == given.strip().casefold()


# -- authoring ----------------------------------------------------------------------------------


def create(rt: Runtime, actor: Actor, title: str, description: str, fields: Fields, column: str | None = None) -> Task:
    """A task on the board. An agent's top-level task lands in triage under a supervised policy, a subtask in
    the backlog, anything else ready (or, for the human, in the planning column asked for)."""
    check_text(title, "title", TITLE_MAX, plain=True)
    check_text(description, "description", BODY_MAX, required=False)
    board = _board_for(rt, actor, fields)
    values = _checked(rt, actor, board, replace(fields, given=fields.given | {"assignee"}), None)
    if column is None:
        if values.get("parent_id"):
            column = "backlog"
        elif actor.kind == "agent" and board.policy.supervised:
            column = "triage"
        else:
            column = "ready"
    now = iso(rt.clock())
    task = Task.new(
        id=new_id(),
        workspace_id=actor.workspace_id,
        by=actor.kind,
        token_id=actor.token_id,
        now=now,
        title=title,
        body=description,
        number=rt.tasks.next_number(actor.account_id, actor.workspace_id),
        column=column,
        **values,
    )
    also = []
    if task.labels:
        also.append(rt.board.labels_added(task.workspace_id, set(task.labels), LABELS_MAX))
    rt.tasks.create(actor.account_id, task, tuple(also))
    count("BoardTaskCreated")
    if actor.kind == "human":
        channel.task_pushed(rt, actor.workspace_id, "task", task)
    # An agent's proposal waits in triage for the human: in the inbox too.
    push.task_changed(rt, actor.workspace_id, task.id, inbox=task.board_column in NEEDS_YOU_COLUMNS)
    return task


def update(
    rt: Runtime, actor: Actor, ref: str, title: str | None, description: str | None, fields: Fields, column: str | None
) -> Task:
    """`update_task`: fields, and moves between the planning columns (triage, backlog, ready) only."""
    task_id = resolve(rt, actor.workspace_id, ref)
    if title is not None:
        check_text(title, "title", TITLE_MAX, plain=True)
    if description is not None:
        check_text(description, "description", BODY_MAX, required=False)
    if column is not None and column not in PLANNING_COLUMNS:
        raise PayloadError(f"status must be one of {', '.join(PLANNING_COLUMNS)}", field="status")
    board = _board_for(rt, actor, fields)
    values = _checked(rt, actor, board, fields, task_id)
    if title is not None:
        values["title"] = title
    if description is not None:
        values["body"] = description

    def edited(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        _workable(task, "update")
        _not_held_by_another(task, actor, now, "edit")
        if column is not None and column != task.board_column:
            if task.board_column not in PLANNING_COLUMNS:
                raise Conflict(
                    f"task {task.id} is {task.board_column}: update moves tasks between triage, backlog and ready; "
                    "claim, complete and release move work in flight"
                )
            if task.board_column == "triage" and actor.kind == "agent" and board.policy.supervised:
                raise Conflict(f"task {task.id} is in triage: under this workspace's policy the human accepts it")
        changed = replace(task, **values, column=column or task.column, updated_at=now)
        names = sorted(set(values) - {"in_active_cycle", "assigned_token"} | ({"column"} if column else set()))
        return changed, (_entry(actor, now, "edited", details={"fields": [_wire(n) for n in names]}),)

    task, _ = _edit(rt, actor, task_id, edited, labels=set(values.get("labels", ())))
    count("BoardTaskUpdated")
    if actor.kind == "human" and "assignee" in values and task.assignee == "agent":
        channel.push(rt, actor.workspace_id, "assigned", task.id, f"Assigned to you: {task.title}", title=task.title)
    return task


def archive(rt: Runtime, actor: Actor, ref: str, reason: str) -> Task:
    """Soft delete: hidden from lists and the queue, with its reason; nothing is deleted."""
    check_text(reason, "reason", REASON_MAX)
    task_id = resolve(rt, actor.workspace_id, ref)

    def archived(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        if task.archived is not None:
            raise Conflict(f"task {task.id} is archived already: {task.archived['reason']}")
        _not_held_by_another(task, actor, now, "archive")
        marker = {"reason": reason, "at": now, "by": actor.kind}
        return replace(task, archived=marker, updated_at=now), (_entry(actor, now, "archived", reason),)

    task, _ = _edit(rt, actor, task_id, archived)
    count("BoardTaskArchived")
    return task


def link(rt: Runtime, actor: Actor, ref: str, link_type: str, other_ref: str) -> dict[str, Any]:
    """`taskId <type> otherTaskId`, visible from both; A blocks B keeps B off the queue until A is done."""
    if link_type not in LINK_TYPES:
        raise PayloadError(f"type must be one of {', '.join(LINK_TYPES)}", field="type")
    task_id = resolve(rt, actor.workspace_id, ref)
    other_id = resolve(rt, actor.workspace_id, other_ref)
    if task_id == other_id:
        raise PayloadError("otherTaskId is the task itself: a task is not linked to itself", field="otherTaskId")
    inverse = INVERSE_LINK[link_type]
    for attempt in range(_ROUNDS):
        task, other = _read(rt, actor, task_id), _read(rt, actor, other_id)
        for one in (task, other):
            if one.is_template:
                raise PayloadError(f"task {one.id} is a recurring template: link its runs", field="taskId")
        if Link(link_type, other_id) in task.links:
            return {"taskId": task_id, "type": link_type, "otherTaskId": other_id, "created": False}
        if link_type == "blocks" and Link("blocked_by", other_id) in task.links:
            raise Conflict(f"task {other_id} blocks task {task_id} already: they would wait on each other")
        if link_type == "blocks":
            _no_blocks_cycle(rt, actor, task_id, other)
        for one in (task, other):
            if len(one.links) >= LINKS_MAX:
                raise Conflict(f"task {one.id} has {LINKS_MAX} links, the most a task may have")
        now = iso(rt.clock())
        waits = link_type == "blocks" and task.board_column != "done"
        after = replace(task, links=(*task.links, Link(link_type, other_id)), updated_at=now)
        other_after = replace(
            other,
            links=(*other.links, Link(inverse, task_id)),
            waiting_on=(*other.waiting_on, task_id) if waits else other.waiting_on,
            updated_at=now,
        )
        details = {"type": link_type, "otherTaskId": other_id}
        inverse_details = {"type": inverse, "otherTaskId": task_id}
        also = (
            rt.tasks.put_if_unchanged(other, other_after),
            rt.tasks.entry_put(other.workspace_id, other.id, _entry(actor, now, "linked", details=inverse_details)),
        )
        try:
            rt.tasks.save(actor.account_id, task, after, (_entry(actor, now, "linked", details=details),), also)
        except Conflict:
            back_off(attempt)
            continue
        count("TasksLinked")
        push.task_changed(rt, actor.workspace_id, task_id)  # the other task's card is on the board it reads again
        return {"taskId": task_id, "type": link_type, "otherTaskId": other_id, "created": True}
    raise Unavailable(f"tasks {task_id} and {other_id} are being changed by others; retry shortly")


def unlink(rt: Runtime, actor: Actor, ref: str, link_type: str, other_ref: str) -> dict[str, Any]:
    """Undo `link`: gone from both tasks; undoing `blocks` takes the task off the other's waiting list (and back
    on the queue once it waits on nothing more). `removed` false when there was no such link."""
    if link_type not in LINK_TYPES:
        raise PayloadError(f"type must be one of {', '.join(LINK_TYPES)}", field="type")
    task_id = resolve(rt, actor.workspace_id, ref)
    other_id = resolve(rt, actor.workspace_id, other_ref)
    inverse = INVERSE_LINK[link_type]
    answer = {"taskId": task_id, "type": link_type, "otherTaskId": other_id}
    for attempt in range(_ROUNDS):
        task, other = _read(rt, actor, task_id), _read(rt, actor, other_id)
        if Link(link_type, other_id) not in task.links:
            return {**answer, "removed": False}
        now = iso(rt.clock())
        after = replace(task, links=tuple(k for k in task.links if k != Link(link_type, other_id)), updated_at=now)
        other_after = replace(
            other,
            links=tuple(k for k in other.links if k != Link(inverse, task_id)),
            waiting_on=tuple(t for t in other.waiting_on if not (link_type == "blocks" and t == task_id)),
            updated_at=now,
        )
        details = {"type": link_type, "otherTaskId": other_id}
        also = (
            rt.tasks.put_if_unchanged(other, other_after),
            rt.tasks.entry_put(
                other.workspace_id,
                other.id,
                _entry(actor, now, "unlinked", details={"type": inverse, "otherTaskId": task_id}),
            ),
        )
        try:
            rt.tasks.save(actor.account_id, task, after, (_entry(actor, now, "unlinked", details=details),), also)
        except Conflict:
            back_off(attempt)
            continue
        count("TasksUnlinked")
        push.task_changed(rt, actor.workspace_id, task_id)
        return {**answer, "removed": True}
    raise Unavailable(f"tasks {task_id} and {other_id} are being changed by others; retry shortly")


def comment(rt: Runtime, actor: Actor, ref: str, text: str) -> dict[str, Any]:
    check_text(text, "text", TEXT_MAX)
    task_id = resolve(rt, actor.workspace_id, ref)
    entry = _entry(actor, iso(rt.clock()), "comment", text)
    rt.tasks.add_comment(actor.workspace_id, task_id, entry)
    count("TaskCommented")
    push.task_changed(rt, actor.workspace_id, task_id)
    note_mentions(rt, actor.account_id, text, f"a comment on task {task_id} (workspace {actor.workspace_id})")
    return {"taskId": task_id, **entry.public()}


def suggest(rt: Runtime, actor: Actor, ref: str, summary: str | None, criteria: list[str] | None) -> Task:
    """An agent's proposal of a summary and criteria, kept as pending until the human accepts or discards it."""
    if summary is None and criteria is None:
        raise PayloadError("suggest a summary, criteria or both", field="criteria")
    if summary is not None:
        check_text(summary, "summary", SUMMARY_MAX)
    proposed = [c.text for c in _criteria(criteria)] if criteria is not None else None
    task_id = resolve(rt, actor.workspace_id, ref)

    def suggested(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        if len(task.pending_suggestions) >= SUGGESTIONS_MAX:
            raise Conflict(f"task {task.id} has {SUGGESTIONS_MAX} pending suggestions; the human decides on them first")
        suggestion: dict[str, Any] = {"id": new_id(), "at": now, "by": actor.kind, "tokenId": actor.token_id}
        if summary is not None:
            suggestion["summary"] = summary
        if proposed is not None:
            suggestion["criteria"] = proposed
        after = replace(task, pending_suggestions=(*task.pending_suggestions, suggestion), updated_at=now)
        return after, (_entry(actor, now, "suggested", details={"suggestionId": suggestion["id"]}),)

    task, _ = _edit(rt, actor, task_id, suggested)
    count("SuggestionMade")
    return task


def decide_suggestion(rt: Runtime, actor: Actor, ref: str, suggestion_id: str, accept: bool) -> Task:
    """The human accepts a suggestion (its summary and criteria replace the task's) or discards it."""
    task_id = resolve(rt, actor.workspace_id, ref)

    def decided(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        found = next((s for s in task.pending_suggestions if s["id"] == suggestion_id), None)
        if found is None:
            raise NotFound(f"no pending suggestion {echo(suggestion_id)!r} on task {task.id}")
        rest = tuple(s for s in task.pending_suggestions if s is not found)
        after = replace(task, pending_suggestions=rest, updated_at=now)
        if accept:
            after = replace(
                after,
                summary=found.get("summary", task.summary),
                criteria=_criteria(found["criteria"]) if "criteria" in found else task.criteria,
            )
        what = "suggestion accepted" if accept else "suggestion discarded"
        return after, (_entry(actor, now, what, details={"suggestionId": suggestion_id}),)

    return _edit(rt, actor, task_id, decided)[0]


# -- the execution loop ---------------------------------------------------------------------------


def next_task(rt: Runtime, actor: Actor, project_id: str | None = None) -> dict[str, Any]:
    """The task `claim` would take first, without taking it: across the whole workspace (tasks of no project
    included), or the first of one project's. Narrowed, the policy comes from the read that finds the project,
    so it costs no request more."""
    if project_id is None:
        policy = rt.board.policy(actor.workspace_id)
    else:
        board = rt.board.for_task(actor.workspace_id, project_id, None, None)
        if project_id not in [p.id for p in board.projects]:
            raise PayloadError(f"projectId {echo(project_id)!r} is not a project of this workspace", field="projectId")
        policy = board.policy
    task = rt.tasks.peek_next(actor.workspace_id, actor.token_id, iso(rt.clock()), project_id)
    return {"task": task.public() if task else None, "workspacePolicy": policy.public()}


class _TakeOver(Exception):
    """The change keeps the status (a lapsed claim claimed over, a dequeued task released): an edit instead."""


def claim(rt: Runtime, actor: Actor, ref: str) -> dict[str, Any]:
    """Take a task: in progress under this token, never twice; it joins the active cycle if it has none."""
    task_id = resolve(rt, actor.workspace_id, ref)
    board = rt.board.for_task(actor.workspace_id, None, None, None)
    now = rt.clock()
    lease = {
        "tokenId": actor.token_id,
        "claimedAt": iso(now),
        "leaseExpiresAt": iso(now + timedelta(seconds=rt.settings.claim_lease_seconds)),
    }

    def claimed(task: Task) -> Task:
        _claimable(task, actor, iso(now))
        joined: dict[str, Any] = {}
        if board.active_cycle_id and task.cycle_id is None:
            joined = {"cycle_id": board.active_cycle_id, "in_active_cycle": True}
        return replace(task, claim=lease, **joined)

    def claimed_from_the_queue(task: Task) -> Task:
        if task.status == "ongoing":
            _claimable(task, actor, iso(now))
            raise _TakeOver
        return claimed(task)

    try:
        task, _ = change_status(rt, actor, task_id, "ongoing", "in_progress", claimed_from_the_queue, what="claimed")
    except _TakeOver:
        taken = _edit(
            rt, actor, task_id, lambda t, at: (replace(claimed(t), updated_at=at), (_entry(actor, at, "claimed"),))
        )
        task = taken[0]
    count("TaskClaimed")
    shown: dict[str, Any] = {**task.public(), "workspacePolicy": board.policy.public()}
    shown["prepQueued"] = not task.summary and not task.criteria
    if shown["prepQueued"]:
        shown["next"] = (
            "This task has neither a summary nor acceptance criteria: propose them with the task tool's suggest "
            "action (they wait as pendingSuggestions for the human), then read the task again."
        )
    return shown


def progress(rt: Runtime, actor: Actor, ref: str, message: str) -> dict[str, Any]:
    """A chunk of progress on the activity feed; it renews the claim's lease (the heartbeat)."""
    check_text(message, "message", TEXT_MAX)
    task_id = resolve(rt, actor.workspace_id, ref)

    def reported(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        _holding(task, actor, now, "report progress on")
        until = iso(parse_iso(now) + timedelta(seconds=rt.settings.claim_lease_seconds))
        held = task.claim or {"tokenId": actor.token_id, "claimedAt": now}
        renewed = {**held, "leaseExpiresAt": until, "heartbeatAt": now}
        return replace(task, claim=renewed, updated_at=now), (_entry(actor, now, "progress", message),)

    task, _ = _edit(rt, actor, task_id, reported)
    count("TaskProgress")
    return {"taskId": task.id, "recorded": True, "leaseExpiresAt": (task.claim or {}).get("leaseExpiresAt")}


@dataclass(frozen=True)
class Verdict:
    index: int
    met: bool
    note: str | None = None


def complete(rt: Runtime, actor: Actor, ref: str, summary: str, verdicts: list[Verdict]) -> dict[str, Any]:
    """Deliver: in review under a sign-off policy, else done; returns the tasks this unblocked."""
    check_text(summary, "summary", SUMMARY_MAX)
    seen: set[int] = set()
    for position, verdict in enumerate(verdicts):
        if verdict.index in seen:
            raise PayloadError(
                f"criteria[{position}].index {verdict.index} is given twice", field=f"criteria[{position}].index"
            )
        seen.add(verdict.index)
        if verdict.note is not None:
            check_text(verdict.note, f"criteria[{position}].note", NOTE_MAX, required=False)
    task_id = resolve(rt, actor.workspace_id, ref)
    policy = rt.board.policy(actor.workspace_id)
    landing = "in_review" if policy.sign_off else "done"
    now = iso(rt.clock())

    def delivered(task: Task) -> Task:
        if task.status == "completed":
            raise Conflict(f"task {task.id} is delivered already ({task.board_column})")
        if task.status not in ("ongoing", "blocked"):
            raise Conflict(f"task {task.id} is {task.board_column}: claim it before completing it")
        _holding(task, actor, now, "complete")
        criteria = list(task.criteria)
        for position, verdict in enumerate(verdicts):
            if not 0 <= verdict.index < len(criteria):
                known = f"0-{len(criteria) - 1}" if criteria else "none"
                raise PayloadError(
                    f"criteria[{position}].index {verdict.index} is not a criterion of task {task.id} "
                    f"(indexes: {known})",
                    field=f"criteria[{position}].index",
                )
            criteria[verdict.index] = replace(criteria[verdict.index], met=verdict.met, note=verdict.note)
        delivery = {"summary": summary, "at": now, "by": actor.kind, "tokenId": actor.token_id}
        return replace(task, criteria=tuple(criteria), delivery=delivery, claim=None)

    met = sum(1 for v in verdicts if v.met)
    details = {"column": landing, "criteriaMet": met, "criteriaGiven": len(verdicts)}
    task, unblocked = change_status(rt, actor, task_id, "completed", landing, delivered, "completed", summary, details)
    count("TaskDelivered")
    if landing == "in_review":
        notifications.notify(rt, "review", actor.account_id, actor.workspace_id, task.id, f"{task.id}#{now}")
    return {**task.public(), "unblocked": [_brief(t) for t in unblocked], "workspacePolicy": policy.public()}


def report_blocker(rt: Runtime, actor: Actor, ref: str, message: str | None, questions: list[str]) -> dict[str, Any]:
    """Blocked on the human: the questions wait in the console's inbox until the human answers them (which
    unblocks the task) or the task moves on."""
    if message is not None:
        check_text(message, "message", TEXT_MAX, required=False)
    if not questions:
        raise PayloadError("questions must hold at least one question for the human", field="questions")
    if len(questions) > QUESTIONS_MAX:
        raise PayloadError(f"questions has {len(questions)} items; at most {QUESTIONS_MAX}", field="questions")
    for index, question in enumerate(questions):
        check_text(question, f"questions[{index}]", QUESTION_MAX)
    task_id = resolve(rt, actor.workspace_id, ref)
    now = iso(rt.clock())

    def blocked(task: Task) -> Task:
        if task.status != "ongoing":
            raise Conflict(f"task {task.id} is {task.board_column}: a blocker is reported on a task in progress")
        _holding(task, actor, now, "report a blocker on")
        return replace(task, questions=tuple(questions))

    details = {"questions": questions}
    task, _ = change_status(rt, actor, task_id, "blocked", "blocked", blocked, "blocker", message, details)
    count("TaskBlockerReported")
    notified = "the human sees these questions in the console's inbox and can answer and unblock the task there"
    return {**task.public(), "notified": notified}


def release(rt: Runtime, actor: Actor, ref: str) -> Task:
    """Hand a claimed task back to ready, claim cleared: only its claimant or the human."""
    task_id = resolve(rt, actor.workspace_id, ref)
    now = iso(rt.clock())

    def released(task: Task) -> Task:
        if task.status not in ("ongoing", "blocked") and not (task.status == "notstarted" and task.claim):
            raise Conflict(f"task {task.id} is {task.board_column}: only a claimed task is released")
        if actor.kind == "agent":
            _holding(task, actor, now, "release")
        return replace(task, claim=None)

    def released_from_work(task: Task) -> Task:
        if task.status == "notstarted":
            released(task)
            raise _TakeOver  # dequeued, never started: back to its place in the queue, no status change
        return released(task)

    try:
        task, _ = change_status(rt, actor, task_id, "notstarted", "ready", released_from_work, what="released")
    except _TakeOver:
        back = _edit(
            rt,
            actor,
            task_id,
            lambda t, at: (replace(released(t), column="ready", updated_at=at), (_entry(actor, at, "released"),)),
        )
        task = back[0]
    count("TaskReleased")
    return task


# -- the human's decisions --------------------------------------------------------------------------


def triage(rt: Runtime, actor: Actor, ref: str, decision: str, comment_text: str | None = None) -> Task:
    """Accept a proposed task (to backlog or ready) or decline it (rejected)."""
    task_id = resolve(rt, actor.workspace_id, ref)
    current = _read(rt, actor, task_id)
    if current.board_column != "triage":
        raise Conflict(f"task {task_id} is {current.board_column}, not in triage")
    if decision == "decline":
        task, _ = change_status(
            rt, actor, task_id, "rejected", "rejected", _still_in("triage"), "declined", comment_text
        )
        return task

    def accepted(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
        _still_in("triage")(task)
        return replace(task, column=decision, updated_at=now), (
            _entry(actor, now, "accepted", comment_text, {"column": decision}),
        )

    return _edit(rt, actor, task_id, accepted)[0]


def review(rt: Runtime, actor: Actor, ref: str, decision: str, comment_text: str | None) -> dict[str, Any]:
    """Approve a delivery in review (done, unblocking what waited on it) or send it back to ready with a comment."""
    task_id = resolve(rt, actor.workspace_id, ref)
    current = _read(rt, actor, task_id)
    if current.board_column != "in_review":
        raise Conflict(f"task {task_id} is {current.board_column}, not in review")
    if decision == "send_back":
        if not comment_text:
            raise PayloadError("say what is missing: a comment goes back with the task", field="comment")
        task, unblocked = change_status(
            rt, actor, task_id, "notstarted", "ready", _still_in("in_review"), "sent back", comment_text
        )
    else:

        def approved(task: Task, now: str) -> tuple[Task, tuple[Entry, ...]]:
            _still_in("in_review")(task)
            return replace(task, column="done", updated_at=now), (_entry(actor, now, "approved", comment_text),)

        task, unblocked = _edit(rt, actor, task_id, approved)
    return {**task.public(), "unblocked": [_brief(t) for t in unblocked]}


NOT_ANSWERED = "(no answer)"


def unblock(rt: Runtime, actor: Actor, ref: str, answers: list[str], comment_text: str | None) -> dict[str, Any]:
    """The human answers a blocker and ends it in one write: a comment of theirs pairing each question with its
    answer (where the agent reads comments), the task back in progress under the claim it had, its lease renewed
    (the agent waited on the human, not idled), the questions cleared. Refused unless the task is still blocked."""
    if len(answers) > QUESTIONS_MAX:
        raise PayloadError(f"answers has {len(answers)} items; at most {QUESTIONS_MAX}", field="answers")
    for index, answer in enumerate(answers):
        check_text(answer, f"answers[{index}]", TEXT_MAX, required=False)
    if comment_text is not None:
        check_text(comment_text, "comment", TEXT_MAX, required=False)
    if not any(answer.strip() for answer in answers) and not (comment_text or "").strip():
        raise PayloadError(
            "answers holds no answer and there is no comment: answer at least one question, or say in comment what "
            "unblocks the task",
            field="answers",
        )
    together = sum(len(answer) for answer in answers) + len(comment_text or "")
    if together > TEXT_MAX:  # they make one comment, whose item DynamoDB must take whole
        raise PayloadError(
            f"answers and comment come to {together:,} characters; at most {TEXT_MAX:,} together (one comment)",
            field="answers",
        )
    task_id = resolve(rt, actor.workspace_id, ref)
    now = rt.clock()
    at = iso(now)
    lease_until = iso(now + timedelta(seconds=rt.settings.claim_lease_seconds))

    def still_blocked(task: Task) -> None:
        if task.status != "blocked":
            raise Conflict(f"task {task.id} is {task.board_column}, not blocked: there is no blocker to answer")
        if task.archived is not None:
            raise Conflict(f"task {task.id} is archived ({task.archived['reason']}): its status stays as it is")
        if len(answers) > len(task.questions):
            raise PayloadError(
                f"answers has {len(answers)} items; task {task.id} asks {len(task.questions)} question(s), "
                "answered in their order",
                field="answers",
            )

    def resumed(task: Task) -> Task:
        claim = {**task.claim, "leaseExpiresAt": lease_until} if task.claim else None
        return replace(task, claim=claim)

    made: list[Entry] = []  # the comment as the write that succeeded made it, from its read of the questions

    def answered(task: Task) -> tuple[Entry, ...]:
        made[:] = [_entry(actor, at, "comment", _answers_text(task.questions, answers, comment_text))]
        return tuple(made)

    task, _ = change_status(
        rt,
        actor,
        task_id,
        "ongoing",
        "in_progress",
        resumed,
        "unblocked",
        details={"column": "in_progress"},
        check=still_blocked,
        comments=answered,
    )
    count("TaskUnblocked")
    [comment_entry] = made
    text = comment_entry.text or ""
    note_mentions(rt, actor.account_id, text, f"a comment on task {task.id} (workspace {actor.workspace_id})")
    # As a human's message reaches the agent's bridge: the agent waiting on these answers hears them.
    channel.push(rt, actor.workspace_id, "reply", task.id, f"Unblocked, back in progress: {task.title}\n\n{text}")
    return {**task.public(), "comment": comment_entry.public()}


def _answers_text(questions: tuple[str, ...], answers: list[str], comment_text: str | None) -> str:
    """The comment an unblock posts: each question with its answer, in their order, then the human's own words."""
    parts = []
    if questions:
        pairs = [
            f"Q: {question}\nA: {answers[index] if index < len(answers) and answers[index].strip() else NOT_ANSWERED}"
            for index, question in enumerate(questions)
        ]
        parts.append("Answers to the blocker's questions:\n\n" + "\n\n".join(pairs))
    if comment_text and comment_text.strip():
        parts.append(comment_text.strip())
    return "\n\n".join(parts)


# -- reading ---------------------------------------------------------------------------------------


def show(rt: Runtime, actor: Actor, ref: str, include_comments: bool = True) -> dict[str, Any]:
    """One task in full: the board's fields, links, pending suggestions, its newest activity and comments, and
    the policy the caller works under."""
    task_id = resolve(rt, actor.workspace_id, ref)
    task = _read(rt, actor, task_id, consistent=False)
    shown = {**task.public(), "description": task.body}
    shown["links"] = [{"type": link.type, "taskId": link.task_id} for link in task.links]
    shown["pendingSuggestions"] = list(task.pending_suggestions)
    shown["activity"] = [e.public() for e in rt.tasks.feed(actor.workspace_id, task_id, FEED_SHOWN)]
    if include_comments:
        shown["comments"] = [e.public() for e in rt.tasks.feed(actor.workspace_id, task_id, FEED_SHOWN, True)]
    shown["workspacePolicy"] = rt.board.policy(actor.workspace_id).public()
    return shown


# -- helpers ---------------------------------------------------------------------------------------


def _read(rt: Runtime, actor: Actor, task_id: str, consistent: bool = True) -> Task:
    task = rt.tasks.get(actor.workspace_id, task_id, consistent=consistent)
    if task is None:
        raise NotFound(f"no task {task_id} in this workspace")
    return task


def _edit(
    rt: Runtime,
    actor: Actor,
    task_id: str,
    change: Callable[[Task, str], tuple[Task, tuple[Entry, ...]]],
    labels: set[str] | None = None,
) -> tuple[Task, list[Task]]:
    """An edit that keeps the status: re-read and re-applied when someone else wrote the task meanwhile."""
    for attempt in range(_ROUNDS):
        before = _read(rt, actor, task_id)
        if before.is_template:
            raise PayloadError(f"task {task_id} is a recurring template: the board works on its runs", field="taskId")
        now = max(iso(rt.clock()), before.updated_at)
        after, entries = change(before, now)
        also = (rt.board.labels_added(actor.workspace_id, labels, LABELS_MAX),) if labels else ()
        try:
            unblocked = rt.tasks.save(actor.account_id, before, after, entries, also)
        except Conflict:
            back_off(attempt)
            continue
        archived = before.archived is None and after.archived is not None
        inbox = changes_the_inbox(before.board_column, after.board_column, archived)  # triage, review, archive
        push.task_changed(rt, actor.workspace_id, task_id, inbox=inbox)
        return after, unblocked
    raise Unavailable(f"task {task_id} is being changed by others; retry shortly")


def _claimable(task: Task, actor: Actor, now: str) -> None:
    """Refused, saying why, unless this token may claim the task now."""
    where = task.board_column
    if task.archived is not None:
        raise Conflict(f"task {task.id} is archived: {task.archived['reason']}")
    if task.is_template:
        raise PayloadError(f"task {task.id} is a recurring template: claim its runs", field="taskId")
    if task.assignee != "agent":
        raise Conflict(f"task {task.id} is assigned to the human")
    if task.assigned_token and task.assigned_token != actor.token_id:
        raise Conflict(f"task {task.id} is assigned to another agent")
    if task.claim and task.claim["tokenId"] != actor.token_id and task.claim["leaseExpiresAt"] > now:
        raise Conflict(f"task {task.id} is claimed by another agent (lease until {task.claim['leaseExpiresAt']})")
    if task.status == "ongoing":
        if task.claim and task.claim["tokenId"] == actor.token_id:
            raise Conflict(f"task {task.id} is claimed by you already")
        if not task.claim:
            raise Conflict(f"task {task.id} is in progress")
        return  # a claim whose lease ran out: taken over
    if where == "triage":
        raise Conflict(f"task {task.id} is in triage: the human accepts it before it is claimed")
    if task.status != "notstarted":
        raise Conflict(f"task {task.id} is {where}: only ready and backlog tasks are claimed")
    if task.waiting_on:
        raise Conflict(f"task {task.id} waits on {', '.join(task.waiting_on)}: claimable once those are done")


def _holding(task: Task, actor: Actor, now: str, doing: str) -> None:
    """Only the claimant works on a claimed task (a lapsed lease is anybody's to take over by claiming)."""
    if task.archived is not None:
        raise Conflict(f"task {task.id} is archived: {task.archived['reason']}")
    if task.claim and task.claim["tokenId"] != actor.token_id:
        raise Conflict(f"task {task.id} is claimed by another agent: only its claimant may {doing} it")
    if task.status not in ("ongoing", "blocked") and doing == "report progress on":
        raise Conflict(f"task {task.id} is {task.board_column}: claim it first")


def _not_held_by_another(task: Task, actor: Actor, now: str, doing: str) -> None:
    """An agent leaves alone what another token holds under a live claim (the human may: it owns the board)."""
    claim = task.claim
    if actor.kind == "agent" and claim and claim["tokenId"] != actor.token_id and claim["leaseExpiresAt"] > now:
        raise Conflict(f"task {task.id} is claimed by another agent: only its claimant may {doing} it")


def _workable(task: Task, doing: str) -> None:
    if task.archived is not None:
        raise Conflict(f"task {task.id} is archived ({task.archived['reason']}): it cannot be {doing}d")


def _still_in(column: str) -> Callable[[Task], Task]:
    def check(task: Task) -> Task:
        if task.board_column != column:
            raise Conflict(f"task {task.id} is {task.board_column} now, not {column}")
        return task

    return check


def _entry(actor: Actor, at: str, what: str, text: str | None = None, details: dict[str, Any] | None = None) -> Entry:
    return Entry(new_id(), at, actor.kind, what, actor.token_id, text, details)


def _brief(task: Task) -> dict[str, Any]:
    return {"id": task.id, "identifier": task.identifier, "title": task.title, "column": task.board_column}


def _wire(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest) if name != "body" else "description"


# -- listing, search and fetch ---------------------------------------------------------------------

QUERY_WORDS_MAX = 8
QUERY_MAX = 200


@dataclass(frozen=True)
class Filters:
    query: str | None = None
    status: str | None = None  # an AgentRQ status or a board column
    epic_id: str | None = None
    label: str | None = None
    assignee: str | None = None
    mine: bool = False
    cycle_id: str | None = None  # or "active"
    project_id: str | None = None
    include_archived: bool = False


def list_tasks(rt: Runtime, actor: Actor, filters: Filters, limit: int, cursor: str | None) -> dict[str, Any]:
    """The board's tasks, filtered, newest status group first as the human's listing: a bounded read per call
    (a page may hold fewer than `limit` with a cursor to read on)."""
    status, matching = _matching(rt, actor, filters)
    found, next_cursor = rt.tasks.list_filtered(actor.workspace_id, status, matching, limit, cursor)
    return {"tasks": [task.public() for task in found], "nextCursor": next_cursor}


def search(rt: Runtime, actor: Actor, query: str, base_url: str) -> dict[str, Any]:
    """OpenAI-shaped search over the workspace's tasks: `{results: [{id, title, url}]}`."""
    if not query.strip():
        raise PayloadError("query must not be empty", field="query")
    found, _ = rt.tasks.list_filtered(actor.workspace_id, None, _matching(rt, actor, Filters(query=query))[1], 20, None)
    return {"results": [{"id": t.id, "title": t.title, "url": task_url(base_url, t)} for t in found]}


_FETCH_METADATA = frozenset(
    {"identifier", "summary", "status", "column", "priority", "complexity", "labels", "dueDate", "projectId"}
    | {"epicId", "cycleId", "parentId", "assignee", "createdAt", "updatedAt"}
)


def fetch(rt: Runtime, actor: Actor, ref: str, base_url: str) -> dict[str, Any]:
    """OpenAI-shaped fetch of one task: its description and criteria as the text ("Body is description plus
    criteria, not activity"); the summary goes with the metadata."""
    task = _read(rt, actor, resolve(rt, actor.workspace_id, ref), consistent=False)
    text = task.body
    if task.criteria:
        text += "\n\nAcceptance criteria:\n" + "\n".join(f"{c.index}. {c.text}" for c in task.criteria)
    metadata = {name: value for name, value in task.public().items() if name in _FETCH_METADATA}
    return {"id": task.id, "title": task.title, "text": text, "url": task_url(base_url, task), "metadata": metadata}


def task_url(base_url: str, task: Task) -> str:
    """Where the task opens in the console."""
    return f"{base_url}/#/workspaces/{task.workspace_id}/tasks/{task.id}"


def _matching(rt: Runtime, actor: Actor, filters: Filters) -> tuple[str | None, TaskFilter]:
    """The listing's status key and what else it keeps, each value checked (the field is named)."""
    status, column = filters.status, None
    if status is not None and status not in STATUSES:
        if status not in STATUS_OF:
            names = ", ".join((*STATUSES, *STATUS_OF))
            raise PayloadError(f"status must be one of {names}", field="status")
        status, column = STATUS_OF[status], status
    cycle: str | None = filters.cycle_id
    if cycle == "active":
        cycle = rt.board.for_task(actor.workspace_id, None, None, None).active_cycle_id
        if cycle is None:
            raise PayloadError("cycleId 'active': no cycle is active in this workspace", field="cycleId")
    label = filters.label
    if label is not None:
        label = check_text(label, "label", LABEL_MAX, plain=True).strip()
    assignee, token = filters.assignee, None
    if filters.assignee is not None and filters.assignee not in ("human", "agent"):
        assignee, token = None, check_id(filters.assignee, "assignee")
    words: tuple[str, ...] = ()
    if filters.query is not None:
        check_text(filters.query, "query", QUERY_MAX, required=False)
        words = tuple(filters.query.lower().split())
        if len(words) > QUERY_WORDS_MAX:
            raise PayloadError(f"query has {len(words)} words; at most {QUERY_WORDS_MAX}", field="query")
    return status, TaskFilter(
        column=column,
        epic_id=check_id(filters.epic_id, "epicId") if filters.epic_id is not None else None,
        project_id=check_id(filters.project_id, "projectId") if filters.project_id is not None else None,
        cycle_id=check_id(cycle, "cycleId") if cycle is not None else None,
        label=label,
        assignee=assignee,
        assigned_token=token,
        mine=actor.token_id if filters.mine else None,
        include_archived=filters.include_archived,
        words=words,
    )
