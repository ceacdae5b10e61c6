"""Events: defining them, subscribing workspaces, publishing, and fanning a publication out to trigger tasks.

Publishing records the publication and puts a reference to it on the queue; the consumer
(`workers.fan_out`) resolves the event's subscriptions and creates one trigger task per
subscription. A trigger task is written together with a marker keyed by the publication and the subscription,
conditional on the marker not existing, so a message delivered twice creates each task once.
"""

from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from agent_workspace.domain import paging
from agent_workspace.domain.clock import iso, parse_iso
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.events import (
    DESCRIPTION_MAX,
    PAYLOAD_MAX,
    SUBSCRIPTION_BODY_MAX,
    SUBSCRIPTION_TITLE_MAX,
    EventDefinition,
    Publication,
    Subscription,
    check_faq,
    check_name,
    trigger_body,
    trigger_details,
)
from agent_workspace.domain.ids import check_id, is_id, new_id
from agent_workspace.domain.models import Actor
from agent_workspace.domain.tasks import Task
from agent_workspace.domain.text import check_text, echo
from agent_workspace.observability import count, logger
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts, channel, notifications, push

# -- definitions and subscriptions (the human's wiring) ------------------------------------------


def define_event(rt: Runtime, account_id: str, name: str, description: str) -> EventDefinition:
    check_name(name)
    check_text(description, "description", DESCRIPTION_MAX, required=False)
    event = EventDefinition(id=new_id(), name=name, description=description, created_at=iso(rt.clock()))
    rt.events.define(account_id, event)
    count("EventDefined")
    return event


def get_event(rt: Runtime, account_id: str, event_id: str) -> EventDefinition:
    event = rt.events.get(account_id, event_id) if is_id(event_id) else None
    if event is None:
        raise NotFound(f"no event {echo(event_id)}")
    return event


def subscribe(rt: Runtime, account_id: str, workspace_id: str, event_id: str, title: str, body: str) -> Subscription:
    accounts.owned_workspace(rt.accounts, account_id, workspace_id)
    check_id(event_id, "eventId")
    check_text(title, "title", SUBSCRIPTION_TITLE_MAX, plain=True)
    check_text(body, "body", SUBSCRIPTION_BODY_MAX, required=False)
    subscription = Subscription(
        id=new_id(), event_id=event_id, workspace_id=workspace_id, title=title, body=body, created_at=iso(rt.clock())
    )
    rt.events.subscribe(account_id, subscription)
    count("EventSubscribed")
    return subscription


def get_subscription(rt: Runtime, account_id: str, workspace_id: str, subscription_id: str) -> Subscription:
    accounts.owned_workspace(rt.accounts, account_id, workspace_id)
    found = rt.events.get_subscription(account_id, subscription_id) if is_id(subscription_id) else None
    if found is None or found.workspace_id != workspace_id:
        raise NotFound(f"no subscription {echo(subscription_id)} in this workspace")
    return found


# -- publishing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewPublication:
    name: str
    payload: str
    task_id: str | None = None
    faq: tuple[tuple[str, str], ...] = ()


def publish(rt: Runtime, actor: Actor, new: NewPublication) -> Publication:
    """Record the publication, then queue it; it never waits for subscribers. A name nobody uses is fine."""
    check_name(new.name)
    check_text(new.payload, "payload", PAYLOAD_MAX, required=False)
    if new.task_id is not None:
        check_id(new.task_id, "taskId")
    publication = Publication(
        id=new_id(),
        name=new.name,
        event_id=None,
        workspace_id=actor.workspace_id,
        task_id=new.task_id,
        payload=new.payload,
        faq=check_faq(list(new.faq)),
        published_at=iso(rt.clock()),
    )
    try:
        try:
            rt.events.record(actor.account_id, publication, _expiry(rt, publication))
        except Conflict:
            # A fresh random id already stored: our own write landed and its answer was lost (a 5xx
            # botocore retried). Carry on and queue it; anything else is a real conflict.
            if rt.events.get_publication(actor.account_id, publication.id) is None:
                raise
        rt.queue.send(_message(actor.account_id, publication.id))
    except BaseException:
        with suppress(Exception):  # nothing half-done: the caller retries the whole call; its error is the one to see
            rt.events.forget(actor.account_id, publication.id)
        raise
    count("EventPublished")
    return publication


class CompletionPublication:
    """For `TaskStore.set_status`: the record a task's first completion writes when it carries an `eventId`.

    `issued` tells the caller afterwards whether this call wrote one (and so must queue it).
    """

    def __init__(self, rt: Runtime, account_id: str, now: str) -> None:
        self._rt, self._account_id, self._now = rt, account_id, now
        self.issued: str | None = None

    def __call__(self, task: Task) -> tuple[str, dict[str, Any]]:
        # The run being continued: the one this task was triggered by, else the one it starts.
        run = (task.trigger or {}).get("taskId") or task.id
        publication = Publication(
            id=new_id(),
            name=None,
            event_id=task.event_id,
            workspace_id=task.workspace_id,
            task_id=run,
            payload=f'Task "{task.title}" ({task.id}) was completed.',
            published_at=self._now,
            source_task_id=task.id,
        )
        self.issued = publication.id
        put = self._rt.events.publication_put(self._account_id, publication, _expiry(self._rt, publication))
        return publication.id, put


def send_completion_event(rt: Runtime, account_id: str, task: Task, newly_published: bool) -> None:
    """Queue the publication a completion recorded. On a repeated completion, queue it again only if it was
    never delivered (the first send may have failed); the consumer makes a second delivery harmless."""
    if not task.event_publication_id:
        return
    if not newly_published:
        recorded = rt.events.get_publication(account_id, task.event_publication_id)
        if recorded is None or recorded.state != "queued":
            return
    rt.queue.send(_message(account_id, task.event_publication_id))
    count("EventPublished")


def list_publications(rt: Runtime, account_id: str, limit: int, cursor: str | None) -> dict[str, Any]:
    """The account's publications, newest first, a page at a time."""
    found, next_cursor = rt.events.list_publications(account_id, limit, cursor, int(rt.clock().timestamp()))
    shown, next_cursor = paging.fill(
        found,
        next_cursor,
        budget=rt.settings.page_bytes,
        shown=Publication.public,
        cursor_after=lambda publication: rt.events.publication_cursor(account_id, publication),
        name=lambda publication: f"publication {publication.id}",
    )
    return {"publications": shown, "nextCursor": next_cursor}


# -- fan-out (the queue's consumer) --------------------------------------------------------------


def deliver(rt: Runtime, message: Any) -> int:
    """Create the trigger tasks of one queued publication; returns how many exist for it now. A failure is raised
    for SQS to retry, and the human is told in 15 minutes if the publication is still undelivered then."""
    account_id, publication_id = _parse_message(message)
    publication = rt.events.get_publication(account_id, publication_id)
    if publication is None:
        # Taken back after a failed send, or expired: there is nothing left to deliver.
        logger.warning("publication not found; message dropped", extra={"publicationId": publication_id})
        return 0
    try:
        return _deliver(rt, account_id, publication)
    except Exception:
        ref = f"event#{publication.id}"
        notifications.notify(rt, "failedRun", account_id, publication.workspace_id, publication.task_id, ref,
                             delay_seconds=FAILED_EVENT_NOTICE_SECONDS)  # fmt: skip
        raise


FAILED_EVENT_NOTICE_SECONDS = 900  # SQS's longest delay; the queue retries a message every 6 minutes meanwhile


def _deliver(rt: Runtime, account_id: str, publication: Publication) -> int:
    event_id = publication.event_id or rt.events.resolve_name(account_id, publication.name or "")
    event = rt.events.get(account_id, event_id) if event_id else None
    name = publication.name or (event.name if event else publication.event_id or "")
    triggered = 0
    if event is not None:
        for subscription in rt.events.subscribers(event.id):
            if _create_trigger(rt, account_id, subscription, publication, event.id, name):
                triggered += 1
    rt.events.mark_delivered(account_id, publication.id, event_id, name, triggered, iso(rt.clock()))
    count("EventFannedOut")
    return triggered


def _create_trigger(
    rt: Runtime, account_id: str, subscription: Subscription, publication: Publication, event_id: str, name: str
) -> bool:
    """One trigger task, once (the delivery marker written with it says so): False only if the workspace is gone."""
    now = iso(rt.clock())
    try:
        number = rt.tasks.next_number(account_id, subscription.workspace_id)
    except Conflict:
        logger.info("subscribing workspace is gone", extra={"subscriptionId": subscription.id})
        return False
    task = Task.new(
        id=new_id(),
        number=number,
        workspace_id=subscription.workspace_id,
        by="event",
        now=now,
        title=subscription.title,
        body=trigger_body(subscription, publication, name),
        assignee="agent",
        trigger=trigger_details(publication, event_id, name),
    )
    marker = rt.events.delivery_put(account_id, publication.id, subscription, task.id, _expiry(rt, publication))
    try:
        rt.tasks.create(account_id, task, also=(marker,))
    except Conflict as conflict:
        _task, count_update, delivered = (conflict.reasons + (None, None, None))[:3]
        if delivered == "ConditionalCheckFailed":
            return True  # delivered before: its trigger task exists already
        if count_update == "ConditionalCheckFailed":
            logger.info("subscribing workspace is gone", extra={"subscriptionId": subscription.id})
            return False
        raise
    count("TriggerTaskCreated")
    channel.task_pushed(rt, subscription.workspace_id, "trigger", task)
    push.task_changed(rt, subscription.workspace_id, task.id)
    return True


def _message(account_id: str, publication_id: str) -> dict[str, str]:
    return {"accountId": account_id, "publicationId": publication_id}


def _parse_message(message: Any) -> tuple[str, str]:
    if not isinstance(message, dict) or not all(
        isinstance(message.get(name), str) and is_id(message[name]) for name in ("accountId", "publicationId")
    ):
        raise PayloadError("an event message carries accountId and publicationId as base62 ids", field="body")
    return message["accountId"], message["publicationId"]


def _expiry(rt: Runtime, publication: Publication) -> int:
    published = parse_iso(publication.published_at)
    return int((published + timedelta(days=rt.settings.event_retention_days)).timestamp())
