"""The work queue between humans and agents: creating, handing out, updating and discussing tasks."""

import base64
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agent_workspace.domain import paging
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.columns import changes_the_inbox
from agent_workspace.domain.cron import first_fire, validate_cron
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.ids import check_id, is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.resources import check_blob_size
from agent_workspace.domain.tasks import (
    STATUSES,
    TEXT_MAX,
    AttachmentIn,
    AttachmentRef,
    Entry,
    Message,
    NewAttachment,
    Task,
    decode_attachments,
    identifier_number,
    is_attachment_id,
)
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX, check_text, echo
from agent_workspace.observability import count
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel, events, notifications, push, schedules
from agent_workspace.services.agent_mentions import note_mentions
from agent_workspace.store.blobs import attachment_key, expires


@dataclass(frozen=True)
class NewTask:
    title: str
    body: str
    assignee: str = "agent"
    attachments: tuple[AttachmentIn, ...] = ()
    cron_schedule: str | None = None
    timezone: str | None = None
    event_id: str | None = None
    clear_context: bool = False


def create_task(rt: Runtime, actor: Actor, new: NewTask) -> Task:
    """A task, or with `cron_schedule` a template whose schedule creates a run per fire time."""
    check_text(new.title, "title", TITLE_MAX, plain=True)
    check_text(new.body, "body", BODY_MAX, required=False)
    if new.timezone is not None and new.cron_schedule is None:
        raise PayloadError("timezone applies only with cronSchedule", field="timezone")
    schedule = validate_cron(new.cron_schedule, new.timezone) if new.cron_schedule is not None else None
    if new.event_id is not None:
        check_id(new.event_id, "eventId")
        if rt.events.get(actor.account_id, new.event_id) is None:  # a typo would publish to nobody, silently
            raise PayloadError(
                f"eventId {new.event_id} is not an event of this account (POST /api/events)", field="eventId"
            )
    decoded = decode_attachments(new.attachments)
    now = rt.clock()
    first = first_fire(schedule, now) if schedule else None
    task_id = new_id()
    number = rt.tasks.next_number(actor.account_id, actor.workspace_id)
    refs = _store_contents(rt, actor.workspace_id, task_id, decoded, iso(now), template=schedule is not None)
    task = Task.new(
        id=task_id,
        workspace_id=actor.workspace_id,
        by=actor.kind,
        token_id=actor.token_id,
        now=iso(now),
        title=new.title,
        body=new.body,
        assignee=new.assignee,
        attachments=refs,
        cron_schedule=schedule.expression if schedule else None,
        timezone=new.timezone,
        event_id=new.event_id,
        clear_context=new.clear_context,
        next_fire_at=iso(first) if first else None,
        number=number,
    )
    with _taking_back(rt, refs):
        if schedule is None:
            rt.tasks.create(actor.account_id, task)
        else:
            schedules.arm_new(rt, actor.account_id, task)
            try:
                rt.tasks.create(actor.account_id, task)  # a template is never queued itself (`Task.queued`)
            except BaseException:
                with suppress(Exception):  # the original error is the one to report
                    schedules.disarm(rt, task)
                raise
    count("TaskCreated")
    push.task_changed(rt, actor.workspace_id, task.id)
    if actor.kind == "human":  # what the agent makes for itself it knows already
        channel.task_pushed(rt, actor.workspace_id, "task", task)
    elif task.assignee == "human" and schedule is None:  # an agent hands the human work: tell them
        notifications.notify(rt, "humanTask", actor.account_id, actor.workspace_id, task.id, task.id)
    return task


def dequeue(rt: Runtime, actor: Actor) -> Task | None:
    now = rt.clock()
    lease_until = now + timedelta(seconds=rt.settings.claim_lease_seconds)
    task = rt.tasks.claim_next(actor.workspace_id, actor.token_id, iso(now), iso(lease_until))
    if task is not None:
        count("TaskDequeued")
        push.task_changed(rt, actor.workspace_id, task.id)
    return task


def get_task(
    rt: Runtime, workspace_id: str, task_id: str, include_conversation: bool, limit: int, cursor: str | None
) -> dict[str, Any]:
    task_id = resolve(rt, workspace_id, task_id)
    if not include_conversation:
        if cursor is not None:
            raise PayloadError("cursor pages the conversation: set includeConversation", field="cursor")
        task = rt.tasks.get(workspace_id, task_id)
        if task is None:
            raise NotFound(f"no task {task_id} in this workspace")
        return task.public()
    task, messages, next_cursor = rt.tasks.get_with_conversation(workspace_id, task_id, limit, cursor)
    detail = {**task.public(), "history": list(task.history)}
    shown, next_cursor = paging.fill(
        messages,
        next_cursor,
        budget=rt.settings.page_bytes,
        reserved=paging.wire_size(detail),  # the task and its history come with every page of its conversation
        shown=Message.public,
        cursor_after=lambda message: rt.tasks.conversation_cursor(workspace_id, task_id, message),
        name=lambda message: f"message {message.id} of task {task_id}",
        read_alone=lambda message: f"GET /api/workspaces/{workspace_id}/tasks/{task_id}/messages/{message.id}",
    )
    return {**detail, "conversation": {"messages": shown, "nextCursor": next_cursor}}


def get_message(rt: Runtime, workspace_id: str, task_id: str, message_id: str) -> Message:
    """One message of a task's conversation, for one too large to come in a page of it."""
    task_id = resolve(rt, workspace_id, task_id)
    message = rt.tasks.get_message(workspace_id, task_id, message_id) if is_id(message_id) else None
    if message is None:
        raise NotFound(f"no message {echo(message_id)!r} in task {task_id}")
    return message


def set_status(rt: Runtime, actor: Actor, task_id: str, status: str) -> Task:
    """AgentRQ's `updateStatus`: the status's own column, except that an agent's delivery waits in review when
    the workspace's policy asks for the human's sign-off."""
    task_id = resolve(rt, actor.workspace_id, task_id)
    if status not in STATUSES:
        raise PayloadError(f"status must be one of {', '.join(STATUSES)}", field="status")
    column = None
    agent = actor.kind == "agent"
    # The policy is read when it decides something: an agent's delivery, or an agent's move out of triage.
    policy = rt.board.policy(actor.workspace_id) if agent and status == "completed" else None
    if policy is not None and policy.sign_off:
        column = "in_review"
    now = iso(rt.clock())

    def allowed(task: Task) -> None:
        nonlocal policy
        if agent and task.board_column == "triage" and policy is None:
            policy = rt.board.policy(actor.workspace_id)
        board_allows_status_change(task, actor, now, supervised=policy is not None and policy.supervised)
        if actor.kind == "agent" and task.status == "rejected" and _declined(rt, task):
            raise Conflict(f"task {task.id} was declined by the human: it stays rejected unless the human reopens it")

    return change_status(rt, actor, task_id, status, column, check=allowed)[0]


DECLINE_LOOKBACK = 50  # newest activity entries read to find the change that rejected a task


def _declined(rt: Runtime, task: Task) -> bool:
    """Rejected by the human's triage decline, not by an `updateStatus` (anyone may reopen that, as in AgentRQ):
    the newest status change on the task's activity feed says which (one Query, only for a rejected task)."""
    last = task.history[-1] if task.history else {}
    if last.get("by") != "human":
        return False
    for entry in rt.tasks.feed(task.workspace_id, task.id, DECLINE_LOOKBACK):
        if entry.details and "status" in entry.details:
            return entry.what == "declined"
    return False


def board_allows_status_change(task: Task, actor: Actor, now: str, supervised: bool) -> None:
    """The board's rules on AgentRQ's `updateStatus`, which moves any task to any status otherwise: an archived
    task stays as it was; an agent leaves alone a task another token holds under a live claim (no completing,
    resetting or claiming it over) and a task in triage the human accepts under a supervised policy (and, checked
    by `set_status`, a task the human declined). Refused with a `Conflict` saying which."""
    if task.archived is not None:
        raise Conflict(f"task {task.id} is archived ({task.archived['reason']}): its status stays as it is")
    if actor.kind != "agent":
        return
    claim = task.claim
    if claim and claim["tokenId"] != actor.token_id and claim["leaseExpiresAt"] > now:
        raise Conflict(
            f"task {task.id} is claimed by another agent (lease until {claim['leaseExpiresAt']}): "
            "only its claimant changes its status"
        )
    if task.board_column == "triage" and supervised:
        raise Conflict(f"task {task.id} is in triage: under this workspace's policy the human accepts it")


def change_status(
    rt: Runtime,
    actor: Actor,
    task_id: str,
    status: str,
    column: str | None = None,
    edit: Callable[[Task], Task] | None = None,
    what: str = "status",
    text: str | None = None,
    details: dict[str, Any] | None = None,
    check: Callable[[Task], None] | None = None,
    comments: Callable[[Task], tuple[Entry, ...]] | None = None,
) -> tuple[Task, list[Task]]:
    """Every status change, AgentRQ's and the board's: history, counts, queue, activity, unblocking and the
    completion event in one place. Returns the task and the tasks it unblocked. `check` refuses, raising, on
    each fresh read of the task, before anything (even a change to the status it has) applies. `comments` makes,
    from each fresh read, the comments posted (and counted on the task) in the change's own transaction."""
    by = {"by": actor.kind, "tokenId": actor.token_id}
    now = iso(rt.clock())
    entry = Entry(new_id(), now, actor.kind, what, actor.token_id, text, {"status": status, **(details or {})})
    publication = events.CompletionPublication(rt, actor.account_id, now)
    task, before, unblocked = rt.tasks.set_status(
        actor.account_id,
        actor.workspace_id,
        task_id,
        status,
        by,
        now,
        publication,
        column,
        edit,
        (entry,),
        check,
        comments=comments,
    )
    old = before.status
    if old != status:
        count(f"TaskStatus{status.capitalize()}")
    push.task_changed(rt, actor.workspace_id, task.id, inbox=changes_the_inbox(before.board_column, task.board_column))
    if actor.kind != "human" and status == "blocked" and old != "blocked":
        notifications.notify(rt, "blocker", actor.account_id, actor.workspace_id, task.id, f"{task.id}#{now}")
    if actor.kind == "human" and old in ("completed", "rejected") and status in ("notstarted", "ongoing"):
        channel.push(rt, actor.workspace_id, "reopened", task.id, f"Reopened: {task.title}")
    if status == "completed" and task.event_id:
        newly = publication.issued is not None and publication.issued == task.event_publication_id
        events.send_completion_event(rt, actor.account_id, task, newly_published=newly)
    return task, unblocked


def resolving_identifier(rt: Runtime, workspace_id: str, ref: str) -> str:
    """`ref` as given, unless it is a short identifier such as WS-42: then the id of the task it names (actions
    that check their ids themselves take this, so their own refusal of a malformed id stays as it is)."""
    return resolve(rt, workspace_id, ref) if identifier_number(ref) is not None else ref


def resolve(rt: Runtime, workspace_id: str, ref: str) -> str:
    """The task id `ref` names: an id as this server makes them, or a short identifier such as WS-42."""
    if is_id(ref):
        return ref
    number = identifier_number(ref)
    found = rt.tasks.task_id_of(workspace_id, number) if number is not None else None
    if found is None:
        raise NotFound(f"no task {echo(ref)!r} in this workspace")
    return found


def post_message(rt: Runtime, actor: Actor, task_id: str, text: str, attachments: Sequence[AttachmentIn]) -> Message:
    task_id = resolve(rt, actor.workspace_id, task_id)
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
    push.task_changed(rt, actor.workspace_id, task_id)
    note_mentions(rt, actor.account_id, text, f"a message of task {task_id} (workspace {actor.workspace_id})")
    if actor.kind == "human":
        channel.push(rt, actor.workspace_id, "reply", task_id, text)
    return message


def attachment(rt: Runtime, workspace_id: str, task_id: str, attachment_id: str, as_base64: bool) -> dict[str, Any]:
    ref = _live_attachment(rt, workspace_id, task_id, attachment_id)
    shown = {"id": ref.id, "filename": ref.filename, "mimeType": ref.mime_type, "size": ref.size}
    if as_base64:
        content = rt.blobs.read(ref.key)
        if content is None:
            raise _expired(rt, attachment_id)
        return {**shown, "data": base64.b64encode(content).decode("ascii")}
    return {**shown, "url": rt.blobs.link(ref.key, ref.filename, rt.settings.attachment_url_seconds)}


def attachment_content(rt: Runtime, workspace_id: str, task_id: str, attachment_id: str) -> tuple[AttachmentRef, bytes]:
    """An attachment and its bytes, as `getAttachment` with format base64 reads them, for MCP `resources/read`:
    refused before S3 is read when it is larger than one response carries (`resources.BLOB_MAX`)."""
    ref = _live_attachment(rt, workspace_id, task_id, attachment_id)
    check_blob_size(f"attachment {echo(attachment_id)!r}", ref.size)
    content = rt.blobs.read(ref.key)
    if content is None:
        raise _expired(rt, attachment_id)
    check_blob_size(f"attachment {echo(attachment_id)!r}", len(content))
    return ref, content


def list_tasks(
    rt: Runtime, workspace_id: str, status: str | None, assignee: str | None, limit: int, cursor: str | None
) -> dict[str, Any]:
    found, next_cursor = rt.tasks.list_page(workspace_id, status, assignee, limit, cursor)
    shown, next_cursor = paging.fill(
        found,
        next_cursor,
        budget=rt.settings.page_bytes,
        shown=Task.public,
        cursor_after=rt.tasks.listing_cursor,
        name=lambda task: f"task {task.id}",
        read_alone=lambda task: f"GET /api/workspaces/{workspace_id}/tasks/{task.id}",
    )
    return {"tasks": shown, "nextCursor": next_cursor}


# -- helpers ------------------------------------------------------------------------------------


def _live_attachment(rt: Runtime, workspace_id: str, task_id: str, attachment_id: str) -> AttachmentRef:
    """The attachment of this workspace's task (an id or a short identifier), unless unknown or expired."""
    task_id = resolve(rt, workspace_id, task_id)
    # An id no attachment can have names nothing, and must not reach a key (DynamoDB's 1,024 bytes, UTF-8 only).
    known = is_attachment_id(attachment_id)
    ref = rt.tasks.get_attachment(workspace_id, task_id, attachment_id) if known else None
    if ref is None:
        raise NotFound(f"no attachment {echo(attachment_id)!r} in task {task_id}")
    retention = timedelta(days=rt.settings.attachment_retention_days)
    if expires(ref.key) and rt.clock() - parse_iso(ref.created_at) > retention:
        raise _expired(rt, attachment_id)
    return ref


def _expired(rt: Runtime, attachment_id: str) -> PayloadError:
    return PayloadError(
        f"attachment {echo(attachment_id)!r} expired: files are kept {rt.settings.attachment_retention_days} days",
        field="attachmentId",
    )


def _store_contents(
    rt: Runtime, workspace_id: str, task_id: str, decoded: list[NewAttachment], now: str, template: bool = False
) -> tuple[AttachmentRef, ...]:
    """Upload every file before its record is written; a record never points at missing content."""
    refs: list[AttachmentRef] = []
    with _taking_back(rt, refs):
        for item in decoded:
            key = attachment_key(workspace_id, task_id, new_id(), template=template)
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
