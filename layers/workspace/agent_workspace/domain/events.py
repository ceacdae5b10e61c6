"""Events: named signals a workspace publishes and other workspaces of the account subscribe to.

A subscription turns each publication into a trigger task in the subscribing workspace; the
limits below keep that task's body (template + payload + FAQ) within a task body's 64 KiB.
"""

import re
from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import check_text, echo

NAME_MAX = 128
DESCRIPTION_MAX = 1024
PAYLOAD_MAX = 16 * 1024
FAQ_MAX = 10
QUESTION_MAX = 500
ANSWER_MAX = 2000
SUBSCRIPTION_TITLE_MAX = 500
SUBSCRIPTION_BODY_MAX = 16 * 1024
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")


@dataclass(frozen=True)
class EventDefinition:
    id: str
    name: str
    description: str
    created_at: str
    subscription_count: int = 0

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "createdAt": self.created_at,
            "subscriptionCount": self.subscription_count,
        }


@dataclass(frozen=True)
class Subscription:
    id: str
    event_id: str
    workspace_id: str
    title: str
    body: str
    created_at: str

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "eventId": self.event_id,
            "workspaceId": self.workspace_id,
            "title": self.title,
            "body": self.body,
            "createdAt": self.created_at,
        }


@dataclass(frozen=True)
class Publication:
    """One publishing of an event, recorded in the publisher's account and carried by the queue."""

    id: str
    name: str | None  # None when published by a task's eventId (resolved on delivery)
    event_id: str | None  # None when published by name (resolved on delivery)
    workspace_id: str
    task_id: str | None  # the workflow run it continues
    payload: str
    faq: tuple[dict[str, str], ...] = ()
    published_at: str = ""
    state: str = "queued"  # "queued", then "delivered"
    triggered: int = 0
    source_task_id: str | None = None  # the task whose completion published it

    def public(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "eventId": self.event_id,
            "workspaceId": self.workspace_id,
            "taskId": self.task_id,
            "payload": self.payload,
            "faq": [dict(entry) for entry in self.faq],
            "publishedAt": self.published_at,
            "state": self.state,
            "triggeredTasks": self.triggered,
        }
        if self.source_task_id:
            shown["sourceTaskId"] = self.source_task_id
        return shown


def check_name(name: str, field_name: str = "name") -> str:
    if not name or len(name) > NAME_MAX or not _NAME.fullmatch(name):
        raise PayloadError(
            f"{field_name} must be 1-{NAME_MAX} letters, digits and _ . : - (starting with a letter or digit), "
            f"e.g. 'deploy_done'; got {echo(name)!r}",
            field=field_name,
        )
    return name


def check_faq(faq: list[tuple[str, str]]) -> tuple[dict[str, str], ...]:
    if len(faq) > FAQ_MAX:
        raise PayloadError(f"faq has {len(faq)} entries; at most {FAQ_MAX}", field="faq")
    for index, (question, answer) in enumerate(faq):
        check_text(question, f"faq[{index}].q", QUESTION_MAX)
        check_text(answer, f"faq[{index}].a", ANSWER_MAX, required=False)
    return tuple({"q": q, "a": a} for q, a in faq)


def trigger_body(subscription: Subscription, publication: Publication, name: str) -> str:
    """The trigger task's body: the subscription's template, then what was published and the run to continue."""
    lines = [
        subscription.body.rstrip(),
        "",
        "---",
        f'Triggered by event "{name}", published {publication.published_at} by workspace {publication.workspace_id}.',
        f"Workflow run taskId: {publication.task_id}" if publication.task_id else "Workflow run taskId: (none given)",
        "",
        "Payload:",
        publication.payload,
    ]
    if publication.faq:
        lines += ["", "FAQ:"]
        for entry in publication.faq:
            lines += [f"Q: {entry['q']}", f"A: {entry['a']}"]
    return "\n".join(lines).lstrip("\n")


def trigger_details(publication: Publication, event_id: str, name: str) -> dict[str, Any]:
    """What the trigger task shows under `trigger`, structured, beside the readable body."""
    details: dict[str, Any] = {
        "eventId": event_id,
        "eventName": name,
        "publicationId": publication.id,
        "publishedBy": publication.workspace_id,
        "payload": publication.payload,
        "faq": [dict(entry) for entry in publication.faq],
    }
    if publication.task_id:
        details["taskId"] = publication.task_id
    return details
