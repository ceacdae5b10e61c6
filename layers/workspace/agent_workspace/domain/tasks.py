"""Tasks, their conversation and attachments: the rules that hold whoever stores them."""

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.text import SEGMENT_RULE, check_plain, echo, is_segment

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
ATTACHMENT_ID_RULE = f"1-{ATTACHMENT_ID_MAX} {SEGMENT_RULE}"
MIME_TYPE_MAX = 255
# type/subtype (RFC 6838 names), then parameters such as `; charset=utf-8` (RFC 9110 tokens or quoted strings):
# the value becomes S3's Content-Type header, so nothing else, and no CR or LF, may reach it.
_MIME_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_MIME_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*"
_MIME_QUOTED = r'"(?:[ !#-\[\]-~]|\\[ -~])*"'  # printable ASCII; '"' and '\' escaped
_MIME_TYPE = re.compile(rf"{_MIME_NAME}/{_MIME_NAME}(?: *; *{_MIME_TOKEN}=(?:{_MIME_TOKEN}|{_MIME_QUOTED}))*")


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
        raise NotFound(f"no task {echo(task_id)!r} in this workspace")
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
        if len(ident) > ATTACHMENT_ID_MAX or not is_segment(ident):
            # the id is a segment of the REST and console download links: anything else could not be fetched
            raise PayloadError(f"{where}.id must be {ATTACHMENT_ID_RULE}, e.g. 'schema'", field=f"{where}.id")
        if ident in seen:
            raise PayloadError(f"{where}.id {ident!r} is used twice in this call", field=f"{where}.id")
        seen.add(ident)
        if not filename.strip() or len(filename) > FILENAME_MAX:
            raise PayloadError(
                f"{where}.filename must be 1-{FILENAME_MAX} printable characters", field=f"{where}.filename"
            )
        check_plain(filename, f"{where}.filename")
        if len(mime_type) > MIME_TYPE_MAX or not _MIME_TYPE.fullmatch(mime_type):
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


def check_text(value: str, field_name: str, maximum: int, *, required: bool = True, plain: bool = False) -> str:
    """A bounded text; `plain` for a title, which must also be one line of plain text (`domain.text`)."""
    if required and not value.strip():
        raise PayloadError(f"{field_name} must not be empty", field=field_name)
    if len(value) > maximum:
        raise PayloadError(f"{field_name} is {len(value)} characters; at most {maximum}", field=field_name)
    return check_plain(value, field_name) if plain else value
