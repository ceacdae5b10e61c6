"""The work queue between humans and agents: creating, handing out, updating and discussing tasks."""

import base64
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.cron import validate_cron
from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import ALPHABET, new_id
from agent_workspace.domain.models import Principal
from agent_workspace.domain.tasks import (
    BODY_MAX,
    STATUSES,
    TEXT_MAX,
    TITLE_MAX,
    AttachmentRef,
    Message,
    NewAttachment,
    Task,
    check_text,
    decode_attachments,
)
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.store.blobs import attachment_key

EVENT_ID_MAX = 64


@dataclass(frozen=True)
class Actor:
    """Who acts on a task: the agent behind a token, or the workspace's human."""

    kind: str  # "agent" or "human"
    account_id: str
    workspace_id: str
    token_id: str

    @classmethod
    def of(cls, principal: Principal, workspace_id: str | None = None) -> "Actor":
        workspace = workspace_id or principal.workspace_id
        assert workspace is not None
        return cls(principal.kind.value, principal.account_id, workspace, principal.token_id)


@dataclass(frozen=True)
class NewTask:
    title: str
    body: str
    assignee: str = "agent"
    attachments: tuple[Any, ...] = ()
    cron_schedule: str | None = None
    timezone: str | None = None
    event_id: str | None = None
    clear_context: bool = False


def create_task(rt: Runtime, actor: Actor, new: NewTask) -> Task:
    check_text(new.title, "title", TITLE_MAX)
    check_text(new.body, "body", BODY_MAX, required=False)
    cron = validate_cron(new.cron_schedule) if new.cron_schedule is not None else None
    if new.timezone is not None:
        _check_timezone(new.timezone)
        if cron is None:
            raise PayloadError("timezone applies only with cronSchedule", field="timezone")
    if new.event_id is not None:
        _check_event_id(new.event_id)
    decoded = decode_attachments(list(new.attachments))
    now = iso(rt.clock())
    task_id = new_id()
    refs = _store_contents(rt, actor.workspace_id, task_id, decoded, now)
    task = Task(
        id=task_id,
        workspace_id=actor.workspace_id,
        title=new.title,
        body=new.body,
        status="notstarted",
        assignee=new.assignee,
        created_by=actor.kind,
        created_at=now,
        updated_at=now,
        attachments=refs,
        cron_schedule=cron,
        timezone=new.timezone,
        event_id=new.event_id,
        clear_context=new.clear_context,
        history=({"status": "notstarted", "at": now, "by": actor.kind, "tokenId": actor.token_id},),
    )
    queued = new.assignee == "agent" and cron is None
    with _taking_back(rt, refs):
        rt.tasks.create(actor.account_id, task, queued=queued)
    count("TaskCreated")
    return task


def dequeue(rt: Runtime, actor: Actor) -> Task | None:
    now = rt.clock()
    lease_until = now + timedelta(seconds=rt.settings.claim_lease_seconds)
    task = rt.tasks.claim_next(actor.workspace_id, actor.token_id, iso(now), iso(lease_until))
    if task is not None:
        count("TaskDequeued")
    return task


def get_task(
    rt: Runtime, workspace_id: str, task_id: str, include_conversation: bool, limit: int, cursor: str | None
) -> dict[str, Any]:
    if not include_conversation:
        if cursor is not None:
            raise PayloadError("cursor pages the conversation: set includeConversation", field="cursor")
        task = rt.tasks.get(workspace_id, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} in this workspace")
        return task.public()
    task, messages, next_cursor = rt.tasks.get_with_conversation(workspace_id, task_id, limit, cursor)
    return {
        **task.public(),
        "history": list(task.history),
        "conversation": {"messages": [m.public() for m in messages], "nextCursor": next_cursor},
    }


def set_status(rt: Runtime, actor: Actor, task_id: str, status: str) -> Task:
    if status not in STATUSES:
        raise PayloadError(f"status must be one of {', '.join(STATUSES)}", field="status")
    by = {"by": actor.kind, "tokenId": actor.token_id}
    task, old = rt.tasks.set_status(actor.account_id, actor.workspace_id, task_id, status, by, iso(rt.clock()))
    if old != status:
        count(f"TaskStatus{status.capitalize()}")
    return task


def post_message(rt: Runtime, actor: Actor, task_id: str, text: str, attachments: list[Any]) -> Message:
    check_text(text, "text", TEXT_MAX)
    decoded = decode_attachments(attachments)
    # With files, check the task before uploading so a wrong id stores nothing; without, the write itself checks.
    if decoded and rt.tasks.get(actor.workspace_id, task_id) is None:
        raise NotFound(f"no task {task_id} in this workspace")
    now = iso(rt.clock())
    refs = _store_contents(rt, actor.workspace_id, task_id, decoded, now)
    message = Message(id=new_id(), author=actor.kind, text=text, created_at=now, attachments=refs)
    with _taking_back(rt, refs):
        rt.tasks.add_message(actor.account_id, actor.workspace_id, task_id, message)
    count("MessagePosted")
    return message


def attachment(rt: Runtime, workspace_id: str, task_id: str, attachment_id: str, as_base64: bool) -> dict[str, Any]:
    ref = rt.tasks.get_attachment(workspace_id, task_id, attachment_id)
    if ref is None:
        raise NotFound(f"no attachment {attachment_id!r} in task {task_id}")
    retention = timedelta(days=rt.settings.attachment_retention_days)
    expired = PayloadError(
        f"attachment {attachment_id!r} expired: files are kept {rt.settings.attachment_retention_days} days",
        field="attachmentId",
    )
    if rt.clock() - parse_iso(ref.created_at) > retention:
        raise expired
    shown = {"id": ref.id, "filename": ref.filename, "mimeType": ref.mime_type, "size": ref.size}
    if as_base64:
        content = rt.blobs.read(ref.key)
        if content is None:
            raise expired
        return {**shown, "data": base64.b64encode(content).decode("ascii")}
    return {**shown, "url": rt.blobs.link(ref.key, ref.filename, rt.settings.attachment_url_seconds)}


def list_tasks(
    rt: Runtime, workspace_id: str, status: str | None, assignee: str | None, limit: int, cursor: str | None
) -> dict[str, Any]:
    tasks, next_cursor = rt.tasks.list_page(workspace_id, status, assignee, limit, cursor)
    return {"tasks": [t.public() for t in tasks], "nextCursor": next_cursor}


# -- helpers ------------------------------------------------------------------------------------


def _store_contents(
    rt: Runtime, workspace_id: str, task_id: str, decoded: list[NewAttachment], now: str
) -> tuple[AttachmentRef, ...]:
    """Upload every file before its record is written; a record never points at missing content."""
    refs: list[AttachmentRef] = []
    with _taking_back(rt, refs):
        for item in decoded:
            key = attachment_key(workspace_id, task_id, new_id())
            rt.blobs.put(key, item.content, item.mime_type)
            refs.append(AttachmentRef(item.id, item.filename, item.mime_type, len(item.content), key, now))
    return tuple(refs)


@contextmanager
def _taking_back(rt: Runtime, refs: Sequence[AttachmentRef]) -> Iterator[None]:
    """On failure, delete the objects uploaded so far: nothing is left half-written."""
    try:
        yield
    except BaseException:
        if refs:
            with suppress(Exception):  # the original error is the one to report
                rt.blobs.delete([ref.key for ref in refs])
        raise


def _check_timezone(name: str) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise PayloadError(
            f"timezone {name!r} is not an IANA time zone such as 'Europe/Berlin'", field="timezone"
        ) from None


def _check_event_id(event_id: str) -> None:
    if not event_id or len(event_id) > EVENT_ID_MAX or any(c not in ALPHABET for c in event_id):
        raise PayloadError(f"eventId must be a base62 id of at most {EVENT_ID_MAX} characters", field="eventId")
