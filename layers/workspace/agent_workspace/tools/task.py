"""The `task` tool: this workspace's tasks, and talking to the human in them."""

from typing import Any, Literal

from pydantic import Field

from agent_workspace.blocking import run_blocking
from agent_workspace.domain.elicitations import MAX_TIMEOUT_SECONDS
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import ATTACHMENT_ID_MAX, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS, AttachmentIn
from agent_workspace.services import elicitations, tasks, waits
from agent_workspace.services.tasks import NewTask
from agent_workspace.tool_registry import Action, Call, Payload, Tool
from agent_workspace.tools import task_board
from agent_workspace.tools.answers.task import Attachment, ElicitAnswer, TaskAnswer

_LIMITS = f"At most {MAX_ATTACHMENTS} files and {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB of content per call."


_ATTACHMENTS: Any = Field(
    default_factory=list,
    description=(
        "Optional attachments: [{id, filename, mimeType, data}] with base64 data; id is any string of "
        f"1-{ATTACHMENT_ID_MAX} characters without control characters, unique in the task. {_LIMITS}"
    ),
)


class CreatePayload(Payload):
    title: str = Field(description="Short title of the task")
    body: str = Field(description="Detailed description of the task or action needed")
    assignee: Literal["human", "agent"] = Field(
        "agent", description="Who should complete the task: 'human' or 'agent'. Default is 'agent'."
    )
    attachments: list[AttachmentIn] = _ATTACHMENTS
    cronSchedule: str | None = Field(
        None,
        description=(
            "Optional cron schedule (5-field format: minute hour dom month dow). A recurring schedule runs hourly "
            "at most: the minute must be a single number, e.g. '30 * * * *'. A fixed day and month, e.g. "
            "'30 14 25 4 *', runs once. The task is then a template: each run creates a new task."
        ),
    )
    timezone: str | None = Field(
        None, description="IANA time zone of cronSchedule, e.g. 'Europe/Berlin'. Default is UTC."
    )
    eventId: str | None = Field(
        None,
        description="Optional event ID (base62) — when this task completes the named event is published automatically.",
    )
    clearContext: bool = Field(
        False,
        description=(
            "Ask for a clean slate: /clear is sent to the agent's terminal before this task is handed over, "
            "so it starts without the context of earlier work."
        ),
    )


class GetPayload(Payload):
    taskId: str | None = Field(
        None, description="The task to read. Leave out to dequeue the next not started task assigned to the agent."
    )
    includeConversation: bool = Field(False, description="Add the task's messages, oldest first.")
    cursor: str | None = Field(None, description="nextCursor of the previous page of the conversation.")
    limit: int = Field(50, ge=1, le=200, description="Messages per page, 1-200. Default 50.")


class UpdateStatusPayload(Payload):
    taskId: str = Field(description="The task")
    status: Literal["ongoing", "completed", "blocked", "rejected", "notstarted"] = Field(
        description="ongoing, completed, blocked (waiting on the human), rejected or notstarted"
    )


class ReplyPayload(Payload):
    taskId: str = Field(description="The task (the chat_id it arrived with; 'chatId' is accepted too)")
    text: str = Field(description="The message the human reads")
    attachments: list[AttachmentIn] = _ATTACHMENTS


class ElicitPayload(Payload):
    taskId: str = Field(description="The task the question belongs to; the human sees it there")
    message: str | None = Field(None, description="The question. Required unless resuming with elicitationId.")
    mode: Literal["form", "url"] | None = Field(
        None,
        description=(
            "'form': the human fills in requestedSchema; 'url': the human opens url (e.g. to sign in or approve). "
            "Optional: requestedSchema means form, url means url; if given it must agree with them."
        ),
    )
    requestedSchema: dict[str, Any] | None = Field(
        None,
        description=(
            'Form mode: {"type": "object", "properties": {...}, "required": [...]} with string, number, integer '
            "or boolean properties (enum allowed)."
        ),
    )
    url: str | None = Field(None, description="URL mode: the http(s) link the human should open.")
    timeoutSeconds: int = Field(
        MAX_TIMEOUT_SECONDS,
        description=(
            f"How long the question waits for the answer, across resumed calls; at most {MAX_TIMEOUT_SECONDS}. "
            "On timeout: cancel."
        ),
    )
    elicitationId: str | None = Field(
        None,
        description=(
            "Resume waiting on a question asked before. One call waits under a minute (by default); if the "
            'human has not answered by then it returns {"action": "pending", "elicitationId": ...}: call elicit '
            "again with the same taskId and that elicitationId. The question is never asked twice."
        ),
    )


class GetAttachmentPayload(Payload):
    taskId: str = Field(description="The task the attachment belongs to")
    attachmentId: str = Field(
        description="The attachment's id, exactly as listed on the task or message (not percent-encoded here)"
    )
    format: Literal["url", "base64"] = Field(
        "url", description="'url' (default) for a time-limited link, 'base64' for the content itself"
    )


def create(call: Call, payload: CreatePayload) -> str:
    task = tasks.create_task(
        call.runtime,
        Actor.of(call.principal),
        NewTask(
            title=payload.title,
            body=payload.body,
            assignee=payload.assignee,
            attachments=tuple(payload.attachments),
            cron_schedule=payload.cronSchedule,
            timezone=payload.timezone,
            event_id=payload.eventId,
            clear_context=payload.clearContext,
        ),
    )
    return f"task created with id={task.id}"


def get(call: Call, payload: GetPayload) -> dict | None:
    actor = Actor.of(call.principal)
    if payload.taskId is not None:
        return tasks.get_task(
            call.runtime, actor.workspace_id, payload.taskId, payload.includeConversation, payload.limit, payload.cursor
        )
    if payload.cursor is not None:
        raise PayloadError("cursor pages one task's conversation: give its taskId too", field="cursor")
    task = tasks.dequeue(call.runtime, actor)
    if task is None:
        return None
    if payload.includeConversation:
        return tasks.get_task(call.runtime, actor.workspace_id, task.id, True, payload.limit, None)
    return task.public()


def update_status(call: Call, payload: UpdateStatusPayload) -> str:
    task = tasks.set_status(call.runtime, Actor.of(call.principal), payload.taskId, payload.status)
    return f"task {task.id} status set to {task.status}"


def reply(call: Call, payload: ReplyPayload) -> str:
    message = tasks.post_message(
        call.runtime, Actor.of(call.principal), payload.taskId, payload.text, list(payload.attachments)
    )
    return f"reply posted to task {payload.taskId} with id={message.id}"


async def elicit(call: Call, payload: ElicitPayload) -> dict:
    actor = Actor.of(call.principal)
    task_id = await run_blocking(tasks.resolving_identifier, call.runtime, actor.workspace_id, payload.taskId)
    payload = payload.model_copy(update={"taskId": task_id})
    # The slot comes first: a refused wait stores no question the agent would ask again.
    async with waits.waiting(call.runtime, actor.account_id, actor.token_id, call.runtime.settings.agent_wait_seconds
                             ) as waited:  # fmt: skip
        await waited.take()
        return await _ask_and_wait(call, actor, payload)


async def _ask_and_wait(call: Call, actor: Actor, payload: ElicitPayload) -> dict:
    if payload.elicitationId is not None:
        given = [name for name in ("message", "mode", "requestedSchema", "url") if getattr(payload, name) is not None]
        if given:
            raise PayloadError(
                f"a resumed question keeps what it was asked with; leave out {', '.join(given)}", field=given[0]
            )
        question = await run_blocking(
            elicitations.find, call.runtime, actor.workspace_id, payload.elicitationId, payload.taskId
        )
    else:
        if payload.message is None:
            raise PayloadError("missing required field 'message' (or elicitationId to resume)", field="message")
        question = await run_blocking(
            elicitations.ask,
            call.runtime,
            actor,
            payload.taskId,
            payload.message,
            payload.mode,
            payload.requestedSchema,
            payload.url,
            payload.timeoutSeconds,
        )
    return await elicitations.wait_for_answer(call.runtime, question, call.deadline)


def get_attachment(call: Call, payload: GetAttachmentPayload) -> dict:
    workspace_id = Actor.of(call.principal).workspace_id
    return tasks.attachment(
        call.runtime, workspace_id, payload.taskId, payload.attachmentId, as_base64=payload.format == "base64"
    )


TOOL = Tool(
    name="task",
    title="Tasks",
    summary="This workspace's tasks, and talking to the human in them.",
    actions=(
        Action(
            name="create",
            summary="Create a task for the human or the agent, optionally scheduled. Returns its ID.",
            payload=CreatePayload,
            handler=create,
            example={
                "title": "Review the release notes",
                "body": "Check the v0.9.20 notes before Friday.",
                "assignee": "human",
            },
        ),
        Action(
            name="get",
            summary=(
                "Get a task, or with no taskId the next not started task assigned to the agent "
                "(dequeues the work queue)."
            ),
            payload=GetPayload,
            handler=get,
            result=TaskAnswer,
            text_too=True,  # null when the queue is empty
            example={"taskId": "0kGogHmaqvZ", "includeConversation": True},
        ),
        Action(
            name="updateStatus",
            summary=(
                "Set a task's status: ongoing when you start, completed when you finish, blocked when you need "
                "the human."
            ),
            payload=UpdateStatusPayload,
            handler=update_status,
            idempotent=True,
            example={"taskId": "0kGogHmaqvZ", "status": "ongoing"},
        ),
        Action(
            name="reply",
            summary="Post a message to the task, optionally with attachments. The human sees only these.",
            payload=ReplyPayload,
            handler=reply,
            example={"taskId": "0kGogHmaqvZ", "text": "Tests pass; opening the pull request."},
        ),
        Action(
            name="elicit",
            summary=(
                "Ask the human a question and wait for the answer: {action, content}, action being accept, decline "
                "or cancel."
            ),
            payload=ElicitPayload,
            handler=elicit,
            result=ElicitAnswer,
            example={
                "taskId": "0kGogHmaqvZ",
                "message": "Which branch should I release from?",
                "mode": "form",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"branch": {"type": "string", "enum": ["main", "release"]}},
                    "required": ["branch"],
                },
            },
        ),
        Action(
            name="getAttachment",
            summary="Get an attachment of a task: its name, type and public link, or its content as base64.",
            payload=GetAttachmentPayload,
            handler=get_attachment,
            read_only=True,
            result=Attachment,
            example={"taskId": "0kGogHmaqvZ", "attachmentId": "schema", "format": "base64"},
        ),
        *task_board.ACTIONS,
    ),
)
