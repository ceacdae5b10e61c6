"""Tasks, their conversation and attachments: the rules that hold whoever stores them."""

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import is_id

STATUSES = ("notstarted", "ongoing", "blocked", "completed", "rejected")
ASSIGNEES = ("human", "agent")

TITLE_MAX = 500
BODY_MAX = 64 * 1024
TEXT_MAX = 64 * 1024
ATTACHMENT_ID_MAX = 128
FILENAME_MAX = 255
MAX_ATTACHMENTS = 10
# Lambda refuses requests over 6 MB and base64 inflates content by 4/3, so ~4 MiB of decoded content
# is what one call can carry; the limit is stated in help rather than met as a 413.
MAX_ATTACHMENT_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class AttachmentRef:
    """An attachment as stored: its content lives in S3 under `key`, never in DynamoDB."""

    id: str
    filename: str
    mime_type: str
    size: int
    key: str
    created_at: str

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "filename": self.filename, "mimeType": self.mime_type, "size": self.size}


@dataclass(frozen=True)
class NewAttachment:
    """An attachment as received, decoded and checked."""

    id: str
    filename: str
    mime_type: str
    content: bytes


@dataclass(frozen=True)
class Message:
    id: str
    author: str  # "agent" or "human"
    text: str
    created_at: str
    attachments: tuple[AttachmentRef, ...] = ()
    kind: str = "message"  # "message", or "question" / "answer" for an elicitation
    details: dict[str, Any] | None = None  # a question's or answer's particulars

    def public(self) -> dict[str, Any]:
        shown = {
            "id": self.id,
            "from": self.author,
            "kind": self.kind,
            "text": self.text,
            "attachments": [a.public() for a in self.attachments],
            "createdAt": self.created_at,
        }
        if self.details:
            shown.update(self.details)
        return shown


@dataclass(frozen=True)
class Task:
    id: str
    workspace_id: str
    title: str
    body: str
    status: str
    assignee: str
    created_by: str
    created_at: str
    updated_at: str
    attachments: tuple[AttachmentRef, ...] = ()
    cron_schedule: str | None = None
    timezone: str | None = None
    event_id: str | None = None
    clear_context: bool = False
    claim: dict[str, str] | None = None
    history: tuple[dict[str, str], ...] = field(default_factory=tuple)
    # A cron template: when it fires next (absent once a one-time schedule has fired) and how often it has.
    next_fire_at: str | None = None
    run_count: int = 0
    # A run of a template: which one, and the fire time it stands for.
    template_id: str | None = None
    fire_at: str | None = None
    # A task created because a subscribed event was published: what was published.
    trigger: dict[str, Any] | None = None
    # Set when completing the task published its event, so completing it again does not.
    event_publication_id: str | None = None

    @property
    def is_template(self) -> bool:
        return self.cron_schedule is not None

    def public(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "body": self.body,
            "status": self.status,
            "assignee": self.assignee,
            "createdBy": self.created_by,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "attachments": [a.public() for a in self.attachments],
        }
        if self.clear_context:
            shown["clearContext"] = True
        if self.cron_schedule:
            shown["cronSchedule"] = self.cron_schedule
            if self.timezone:
                shown["timezone"] = self.timezone
            shown["runCount"] = self.run_count
            if self.next_fire_at:
                shown["nextRunAt"] = self.next_fire_at
        if self.template_id:
            shown["templateId"] = self.template_id
            shown["scheduledFor"] = self.fire_at
        if self.trigger:
            shown["trigger"] = dict(self.trigger)
        if self.event_id:
            shown["eventId"] = self.event_id
            if self.event_publication_id:
                shown["eventPublicationId"] = self.event_publication_id
        if self.claim:
            shown["claim"] = dict(self.claim)
        return shown


def existing_id(task_id: str) -> str:
    """A task id as this server makes them, or NotFound: anything else cannot name a task, and must never
    reach a key (a prefix of a real id would match its conversation, a long one overflow the key size)."""
    if not is_id(task_id):
        raise NotFound(f"no task {task_id[:64]!r} in this workspace")
    return task_id


def decode_attachments(raw: list[Any], field_name: str = "attachments") -> list[NewAttachment]:
    """Decode and check every attachment before anything is stored; the first problem is refused."""
    if len(raw) > MAX_ATTACHMENTS:
        raise PayloadError(f"{field_name} has {len(raw)} files; at most {MAX_ATTACHMENTS} per call", field=field_name)
    decoded: list[NewAttachment] = []
    seen: set[str] = set()
    total = 0
    for index, item in enumerate(raw):
        where = f"{field_name}[{index}]"
        ident, filename, mime_type, data = item.id, item.filename, item.mimeType, item.data
        if not ident or len(ident) > ATTACHMENT_ID_MAX or not ident.isprintable():
            raise PayloadError(f"{where}.id must be 1-{ATTACHMENT_ID_MAX} printable characters", field=f"{where}.id")
        if ident in seen:
            raise PayloadError(f"{where}.id {ident!r} is used twice in this call", field=f"{where}.id")
        seen.add(ident)
        if not filename.strip() or len(filename) > FILENAME_MAX or not filename.isprintable():
            raise PayloadError(
                f"{where}.filename must be 1-{FILENAME_MAX} printable characters", field=f"{where}.filename"
            )
        if not mime_type or "/" not in mime_type or len(mime_type) > 255:
            raise PayloadError(f"{where}.mimeType must be a MIME type such as 'text/plain'", field=f"{where}.mimeType")
        try:
            content = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise PayloadError(f"{where}.data is not valid base64", field=f"{where}.data") from None
        total += len(content)
        if total > MAX_ATTACHMENT_BYTES:
            raise PayloadError(
                f"{field_name} carry more than {MAX_ATTACHMENT_BYTES // (1024 * 1024)} MiB of content in one call",
                field=where,
            )
        decoded.append(NewAttachment(ident, filename, mime_type, content))
    return decoded


def check_text(value: str, field_name: str, maximum: int, *, required: bool = True) -> str:
    if required and not value.strip():
        raise PayloadError(f"{field_name} must not be empty", field=field_name)
    if len(value) > maximum:
        raise PayloadError(f"{field_name} is {len(value)} characters; at most {maximum}", field=field_name)
    return value
