"""Human REST API: a workspace's tasks, their conversation and attachments.

The human's side of the work queue: the same use cases the agent reaches through the `task` tool
(`services.tasks`), for a workspace of the caller's account; any other workspace is a 404.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep, human_actor
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.paging import PAGE_BYTES
from agent_workspace.domain.tasks import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENTS,
    TEXT_MAX,
    Assignee,
    AttachmentIn,
    AttachmentView,
    Author,
    Status,
    TaskView,
)
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import accounts, schedules, tasks
from agent_workspace.services.tasks import NewTask

router = APIRouter(
    prefix="/api/workspaces/{workspace_id}/tasks",
    tags=["tasks"],
    responses=problem_responses(401, 403, 404, 422, 503),
)

_LIMITS = f"At most {MAX_ATTACHMENTS} files and {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB of content per request."
_ATTACHMENTS: Any = Field(
    default_factory=list,
    description=f"Optional files: [{{id, filename, mimeType, data}}] with base64 data; ids unique per task. {_LIMITS}",
)
_EARLY = f"a page ends early rather than pass {PAGE_BYTES // (1024 * 1024)} MiB, so follow nextCursor"
Limit = Annotated[int, Query(ge=1, le=200, description=f"Items per page, 1-200; {_EARLY}.")]
Cursor = Annotated[str | None, Query(description="nextCursor of the previous page; leave out for the first page.")]


# -- bodies ---------------------------------------------------------------------------------------


class TaskIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str = Field(description="Short title of the task.", json_schema_extra={"maxLength": TITLE_MAX})
    body: str = Field(description="What the agent should do; may be empty.", json_schema_extra={"maxLength": BODY_MAX})
    attachments: list[AttachmentIn] = _ATTACHMENTS
    cronSchedule: str | None = Field(
        None,
        description=(
            "Make it a template that creates a task per fire time (5 fields: minute hour dom month dow; hourly at "
            "most, so the minute is one number). A fixed day and month, e.g. '30 14 25 4 *', fires once."
        ),
    )
    timezone: str | None = Field(
        None, description="IANA time zone of cronSchedule, e.g. 'Europe/Berlin'; UTC if unset."
    )
    eventId: str | None = Field(None, description="Publish this event when the task is completed (the first time).")


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    text: str = Field(description="The message the agent reads.", json_schema_extra={"maxLength": TEXT_MAX})
    attachments: list[AttachmentIn] = _ATTACHMENTS


class StatusIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    status: Status = Field(description="The task's new status.")


# -- answers --------------------------------------------------------------------------------------


class Shown(BaseModel):
    """Documents what a service returns; a field it adds later passes through instead of being dropped."""

    model_config = ConfigDict(extra="allow")


class TaskPage(Shown):
    tasks: list[TaskView] = Field(description="By status, then oldest first.")
    nextCursor: str | None = Field(description="Pass as cursor for the next page; null on the last one.")


class MessageOut(Shown):
    id: str
    from_: Assignee = Field(alias="from", description="Who wrote it.")
    kind: str = Field(
        description="'message'; 'question' or 'answer' for an elicitation, whose particulars follow as further fields."
    )
    text: str
    attachments: list[AttachmentView]
    createdAt: str


class Conversation(Shown):
    messages: list[MessageOut] = Field(description="Oldest first.")
    nextCursor: str | None = Field(description="Pass as cursor for the next page of messages; null on the last one.")


class StatusChange(Shown):
    status: Status
    at: str
    by: Author = Field(description="Who changed it.")
    tokenId: str | None = Field(None, description="The token that made the change, where recorded.")


class TaskDetail(TaskView):
    conversation: Conversation
    history: list[StatusChange] = Field(
        description="Status changes, oldest first: the creation, then the latest 99 (each is in the activity feed)."
    )


class RunPage(Shown):
    runs: list[TaskView] = Field(description="Newest first.")
    nextCursor: str | None = Field(description="Pass as cursor for the next page; null on the last one.")


class AttachmentContent(AttachmentView):
    url: str | None = Field(None, description="With format=url: a time-limited download link.")
    data: str | None = Field(None, description="With format=base64: the content, base64-encoded.")


# -- routes ---------------------------------------------------------------------------------------


@router.get("", response_model=TaskPage, response_model_exclude_unset=True)
def list_tasks(
    workspace_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    assignee: Annotated[Assignee | None, Query(description="Only the human's tasks, or only the agent's.")] = None,
    status: Annotated[Status | None, Query(description="Only tasks in this status.")] = None,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> dict:
    """The workspace's tasks, a page at a time."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return tasks.list_tasks(rt, workspace_id, status, assignee, limit, cursor)


@router.post("", status_code=201, response_model=TaskView, response_model_exclude_unset=True)
def create_task(workspace_id: str, payload: TaskIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Create a task for the agent: it joins the agent's queue as notstarted (with cronSchedule: a template)."""
    actor = human_actor(rt, human, workspace_id)
    new = NewTask(
        title=payload.title,
        body=payload.body,
        assignee="agent",
        attachments=tuple(payload.attachments),
        cron_schedule=payload.cronSchedule,
        timezone=payload.timezone,
        event_id=payload.eventId,
    )
    return tasks.create_task(rt, actor, new).public()


@router.delete("/{task_id}", status_code=204, responses=problem_responses(409))
def delete_template(workspace_id: str, task_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Delete a cron template and its schedule; the runs it created stay. Other tasks are a 409."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    schedules.delete_template(rt, human.account_id, workspace_id, task_id)
    return Response(status_code=204)


@router.get("/{task_id}/runs", response_model=RunPage, response_model_exclude_unset=True)
def list_runs(
    workspace_id: str, task_id: str, human: HumanDep, rt: RuntimeDep, limit: Limit = 50, cursor: Cursor = None
) -> dict:
    """The tasks a cron template has created, newest first."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return schedules.list_runs(rt, workspace_id, task_id, limit, cursor)


@router.get("/{task_id}", response_model=TaskDetail, response_model_exclude_unset=True)
def get_task(
    workspace_id: str,
    task_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    limit: Limit = 50,
    cursor: Cursor = None,
) -> dict:
    """One task with a page of its conversation (limit and cursor page the messages) and its status history."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return tasks.get_task(rt, workspace_id, task_id, include_conversation=True, limit=limit, cursor=cursor)


@router.get("/{task_id}/messages/{message_id}", response_model=MessageOut, response_model_exclude_unset=True)
def get_message(workspace_id: str, task_id: str, message_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """One message of the task's conversation, for one too large to come in a page of it."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return tasks.get_message(rt, workspace_id, task_id, message_id).public()


@router.post(
    "/{task_id}/messages",
    status_code=201,
    response_model=MessageOut,
    response_model_exclude_unset=True,
    responses=problem_responses(409),  # an attachment id already used in the task
)
def post_message(workspace_id: str, task_id: str, payload: MessageIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Post a message to the task's conversation, optionally with files."""
    actor = human_actor(rt, human, workspace_id)
    return tasks.post_message(rt, actor, task_id, payload.text, list(payload.attachments)).public()


@router.patch("/{task_id}", response_model=TaskView, response_model_exclude_unset=True)
def set_status(workspace_id: str, task_id: str, payload: StatusIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Set the task's status; the change is added to its history."""
    actor = human_actor(rt, human, workspace_id)
    return tasks.set_status(rt, actor, task_id, payload.status).public()


@router.get(
    # `:path`: an id is any string, so it may hold '/' (sent percent-encoded, as %2F)
    "/{task_id}/attachments/{attachment_id:path}",
    response_model=AttachmentContent,
    response_model_exclude_unset=True,
)
def get_attachment(
    workspace_id: str,
    task_id: str,
    attachment_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    format: Annotated[
        Literal["url", "base64"],
        Query(description="'url' for a time-limited download link, 'base64' for the content itself."),
    ] = "url",
) -> dict:
    """An attachment of the task or of one of its messages: its name, type and size, with a link or its content."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return tasks.attachment(rt, workspace_id, task_id, attachment_id, as_base64=format == "base64")
