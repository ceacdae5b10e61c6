"""The `task` tool's board actions: Masaro's task-level tools, with their flat camelCase fields."""

from typing import Any, Literal

from pydantic import Field

from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import task_board
from agent_workspace.services.task_board import QUESTIONS_MAX, FieldsIn, Filters, Verdict
from agent_workspace.tool_registry import Action, Call, Payload
from agent_workspace.tools.answers.task import (
    CommentAnswer,
    FetchAnswer,
    LinkAnswer,
    NextTask,
    ProgressAnswer,
    SearchAnswer,
    TaskAnswer,
    TaskPage,
    UnlinkAnswer,
)

_TASK_ID: Any = Field(description="The task: its id, or its short identifier such as WS-42")


class ProposePayload(FieldsIn, Payload):
    title: str = Field(description=f"One line of plain text, at most {TITLE_MAX} characters")
    description: str = Field("", description=f"Markdown, at most {BODY_MAX // 1024} KiB")


class EditPayload(FieldsIn, Payload):
    taskId: str = _TASK_ID
    title: str | None = None
    description: str | None = None
    status: Literal["triage", "backlog", "ready"] | None = Field(
        None, description="Move between the planning columns; claim, complete and release move work in flight"
    )


class ListPayload(Payload):
    query: str | None = Field(None, description="Words the title, summary, description or labels contain")
    status: str | None = Field(None, description="A status (notstarted, ongoing, …) or a board column (ready, …)")
    epicId: str | None = None
    label: str | None = None
    assignee: str | None = Field(None, description="'human', 'agent' or an agent token's id")
    mine: bool = Field(False, description="Only tasks assigned to or claimed by you")
    cycleId: str | None = Field(None, description="A cycle's id, or 'active'")
    projectId: str | None = None
    includeArchived: bool = Field(False, description="Archived tasks are left out unless asked for")
    cursor: str | None = Field(None, description="nextCursor of the previous page")
    limit: int = Field(50, ge=1, le=100, description="Tasks per page, 1-100. Default 50.")


class NextPayload(Payload):
    projectId: str | None = Field(
        None, description="Only this project's tasks; absent: the whole workspace, tasks of no project included"
    )


class TaskPayload(Payload):
    taskId: str = _TASK_ID


class ShowPayload(TaskPayload):
    includeComments: bool = Field(True, description="Add the task's newest comments")


class ProgressPayload(TaskPayload):
    message: str = Field(description="What got done: setup, core implementation, tests, PR opened…")


class CriterionVerdict(Payload):
    index: int = Field(description="The criterion's index, as the task lists it")
    met: bool
    note: str | None = None


class CompletePayload(TaskPayload):
    summary: str = Field(description="What was delivered")
    criteria: list[CriterionVerdict] = Field(default_factory=list, description="[{index, met, note?}]")


class BlockerPayload(TaskPayload):
    questions: list[str] = Field(description=f"What the human must answer to unblock you, at most {QUESTIONS_MAX}")
    message: str | None = Field(None, description="What blocks you")
    reason: str | None = Field(None, description="Same as message")


class ArchivePayload(TaskPayload):
    reason: str = Field(description="Why; archived tasks leave lists and the queue, nothing is deleted")


class LinkPayload(TaskPayload):
    type: Literal["blocks", "relates_to", "duplicate_of"] = Field(
        description="Reads 'taskId <type> otherTaskId': A blocks B means B waits for A"
    )
    otherTaskId: str = Field(description="The other task: id or identifier")


class CommentPayload(TaskPayload):
    text: str = Field(description="A question, a finding, context for the reviewer")


class SuggestPayload(TaskPayload):
    summary: str | None = None
    criteria: list[str] | None = Field(None, description="Proposed acceptance criteria")


class SearchPayload(Payload):
    query: str = Field(description="Words to look for")


class FetchPayload(Payload):
    id: str = Field(description="A task id or identifier, as search returned it")


def _actor(call: Call) -> Actor:
    return Actor.of(call.principal)


def propose(call: Call, p: ProposePayload) -> dict:
    return task_board.create(call.runtime, _actor(call), p.title, p.description, p.fields()).public()


def edit(call: Call, p: EditPayload) -> dict:
    task = task_board.update(call.runtime, _actor(call), p.taskId, p.title, p.description, p.fields(), p.status)
    return task.public()


def list_tasks(call: Call, p: ListPayload) -> dict:
    filters = Filters(
        p.query, p.status, p.epicId, p.label, p.assignee, p.mine, p.cycleId, p.projectId, p.includeArchived
    )
    return task_board.list_tasks(call.runtime, _actor(call), filters, p.limit, p.cursor)


def show(call: Call, p: ShowPayload) -> dict:
    return task_board.show(call.runtime, _actor(call), p.taskId, p.includeComments)


def next_task(call: Call, p: NextPayload) -> dict:
    return task_board.next_task(call.runtime, _actor(call), p.projectId)


def claim(call: Call, p: TaskPayload) -> dict:
    return task_board.claim(call.runtime, _actor(call), p.taskId)


def progress(call: Call, p: ProgressPayload) -> dict:
    return task_board.progress(call.runtime, _actor(call), p.taskId, p.message)


def complete(call: Call, p: CompletePayload) -> dict:
    verdicts = [Verdict(c.index, c.met, c.note) for c in p.criteria]
    return task_board.complete(call.runtime, _actor(call), p.taskId, p.summary, verdicts)


def report_blocker(call: Call, p: BlockerPayload) -> dict:
    message = p.message if p.message is not None else p.reason
    return task_board.report_blocker(call.runtime, _actor(call), p.taskId, message, p.questions)


def release(call: Call, p: TaskPayload) -> dict:
    return task_board.release(call.runtime, _actor(call), p.taskId).public()


def archive(call: Call, p: ArchivePayload) -> dict:
    return task_board.archive(call.runtime, _actor(call), p.taskId, p.reason).public()


def link(call: Call, p: LinkPayload) -> dict:
    return task_board.link(call.runtime, _actor(call), p.taskId, p.type, p.otherTaskId)


def unlink(call: Call, p: LinkPayload) -> dict:
    return task_board.unlink(call.runtime, _actor(call), p.taskId, p.type, p.otherTaskId)


def comment(call: Call, p: CommentPayload) -> dict:
    return task_board.comment(call.runtime, _actor(call), p.taskId, p.text)


def suggest(call: Call, p: SuggestPayload) -> dict:
    return task_board.suggest(call.runtime, _actor(call), p.taskId, p.summary, p.criteria).public()


def search(call: Call, p: SearchPayload) -> dict:
    return task_board.search(call.runtime, _actor(call), p.query, call.base_url)


def fetch(call: Call, p: FetchPayload) -> dict:
    return task_board.fetch(call.runtime, _actor(call), p.id, call.base_url)


_EXAMPLE_ID = {"taskId": "WS-42"}

ACTIONS = (
    Action(
        name="list",
        summary=(
            "The board's tasks, filtered by query, status or column, epic, label, assignee, mine, cycle or project; "
            "paginated with a cursor (a page may hold fewer than limit: read on while nextCursor is set)."
        ),
        payload=ListPayload,
        handler=list_tasks,
        result=TaskPage,
        read_only=True,
        example={"status": "ready", "label": "billing"},
    ),
    Action(
        name="show",
        summary=(
            "One task in full: description, criteria, links, activity, comments, pendingSuggestions and the "
            "workspacePolicy you work under."
        ),
        payload=ShowPayload,
        handler=show,
        result=TaskAnswer,
        read_only=True,
        example=_EXAMPLE_ID,
    ),
    Action(
        name="next",
        summary=(
            "The next workable task, without taking it: assigned to you first, then ready, then backlog with "
            "criteria; the active cycle first, then priority, then age. Across the workspace, or one projectId's. "
            "With the workspacePolicy."
        ),
        payload=NextPayload,
        handler=next_task,
        result=NextTask,
        read_only=True,
    ),
    Action(
        name="claim",
        summary="Take a task: in progress under your token, never twice; it joins the active cycle.",
        payload=TaskPayload,
        handler=claim,
        result=TaskAnswer,
        idempotent=True,
        example=_EXAMPLE_ID,
    ),
    Action(
        name="progress",
        summary="Report a chunk of progress on the activity feed; renews your claim (the heartbeat).",
        payload=ProgressPayload,
        handler=progress,
        result=ProgressAnswer,
        example={"taskId": "WS-42", "message": "Core implementation done; writing tests."},
    ),
    Action(
        name="complete",
        summary=(
            "Deliver: a summary and a met/not-met verdict per criterion. In review when the human signs off, "
            "else done; returns the tasks this unblocked."
        ),
        payload=CompletePayload,
        handler=complete,
        result=TaskAnswer,
        idempotent=True,
        example={"taskId": "WS-42", "summary": "Refunds ship.", "criteria": [{"index": 0, "met": True}]},
    ),
    Action(
        name="reportBlocker",
        summary="Stuck on the human: the task is blocked and your questions head the human's list.",
        payload=BlockerPayload,
        handler=report_blocker,
        result=TaskAnswer,
        idempotent=True,
        example={"taskId": "WS-42", "questions": ["Which currency do refunds use?"]},
    ),
    Action(
        name="release",
        summary="Hand a claimed task back to ready without completing it; only its claimant.",
        payload=TaskPayload,
        handler=release,
        result=TaskAnswer,
        idempotent=True,
        example=_EXAMPLE_ID,
    ),
    Action(
        name="propose",
        summary=(
            "Create a board task: summary, description, criteria, complexity, priority, labels, due date, epic, "
            "project, cycle, assignee, parentId for a subtask. In triage under a supervised policy."
        ),
        payload=ProposePayload,
        handler=propose,
        result=TaskAnswer,
        example={"title": "Add refund endpoint", "criteria": ["POST /refunds returns 201"], "priority": "high"},
    ),
    Action(
        name="edit",
        summary="Edit a task's fields; status moves it between triage, backlog and ready only.",
        payload=EditPayload,
        handler=edit,
        result=TaskAnswer,
        idempotent=True,
        example={"taskId": "WS-42", "priority": "urgent", "cycleId": None},
    ),
    Action(
        name="archive",
        summary="Archive a task, with a reason: it leaves lists and the queue; nothing is deleted.",
        payload=ArchivePayload,
        handler=archive,
        result=TaskAnswer,
        idempotent=True,
        destructive=True,
        example={"taskId": "WS-42", "reason": "Duplicate of WS-40"},
    ),
    Action(
        name="link",
        summary="Relate two tasks: 'taskId blocks otherTaskId' (the other waits), relates_to or duplicate_of.",
        payload=LinkPayload,
        handler=link,
        result=LinkAnswer,
        idempotent=True,
        example={"taskId": "WS-41", "type": "blocks", "otherTaskId": "WS-42"},
    ),
    Action(
        name="unlink",
        summary="Undo a link: gone from both tasks; a task no longer waits on one that blocked it.",
        payload=LinkPayload,
        handler=unlink,
        result=UnlinkAnswer,
        idempotent=True,
        example={"taskId": "WS-41", "type": "blocks", "otherTaskId": "WS-42"},
    ),
    Action(
        name="comment",
        summary="Comment on a task: a question, a finding, context for the reviewer.",
        payload=CommentPayload,
        handler=comment,
        result=CommentAnswer,
        example={"taskId": "WS-42", "text": "The staging keys expired; I used the sandbox."},
    ),
    Action(
        name="suggest",
        summary="Propose a summary and criteria for a task; they wait as pendingSuggestions for the human.",
        payload=SuggestPayload,
        handler=suggest,
        result=TaskAnswer,
        example={"taskId": "WS-42", "criteria": ["Refunds over 100 EUR need approval"]},
    ),
    Action(
        name="search",
        summary="Search the workspace's tasks: {results: [{id, title, url}]}, the url opening it in the console.",
        payload=SearchPayload,
        handler=search,
        result=SearchAnswer,
        read_only=True,
        example={"query": "refund"},
    ),
    Action(
        name="fetch",
        summary="One task as {id, title, text, url, metadata}: its description and criteria, not its activity.",
        payload=FetchPayload,
        handler=fetch,
        result=FetchAnswer,
        read_only=True,
        example={"id": "WS-42"},
    ),
)
