"""Tasks, their conversation and attachments: the rules that hold whoever stores them."""

import base64
import binascii
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args
from urllib.parse import quote, unquote

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_snake

from agent_workspace.domain.columns import column_of, queue_rank
from agent_workspace.domain.errors import NotFound, PayloadError
from agent_workspace.domain.ids import is_id
from agent_workspace.domain.stored import STORED
from agent_workspace.domain.text import check_plain, echo

Status = Literal["notstarted", "ongoing", "blocked", "completed", "rejected"]
Assignee = Literal["human", "agent"]
Author = Literal["human", "agent", "schedule", "event"]  # runs and trigger tasks are made by the server
STATUSES: tuple[str, ...] = get_args(Status)
ASSIGNEES: tuple[str, ...] = get_args(Assignee)

IDENTIFIER_PREFIX = "WS-"  # a task's short identifier in its workspace: WS-42
_IDENTIFIER = re.compile(r"WS-([1-9][0-9]{0,11})", re.IGNORECASE)
TEXT_MAX = 64 * 1024
ATTACHMENT_ID_MAX = 128
FILENAME_MAX = 255
MAX_ATTACHMENTS = 10
# Lambda refuses requests over 6 MB and base64 inflates content by 4/3, so ~4 MiB of decoded content
# is what one call can carry; the limit is stated in help rather than met as a 413.
MAX_ATTACHMENT_BYTES = 4 * 1024 * 1024
# AgentRQ's attachment id is "any string": one line of plain text (`domain.text.check_plain`), bounded so that its
# key and its percent-encoded links stay small; links carry it percent-encoded (`link_segment`).
ATTACHMENT_ID_RULE = f"1-{ATTACHMENT_ID_MAX} characters of one line of plain text (no control characters)"
MIME_TYPE_MAX = 255
# DynamoDB refuses an item over 400 KB (409,600 bytes), after an update too, and the caller saw "internal error".
# A task's writes check its size as stored against this, leaving room for the small writes that do not check
# (a claim, a message's `updatedAt`).
TASK_ITEM_BYTES_MAX = 400 * 1024 - 8 * 1024
# A task's status history, kept in its item, is its creation and its latest changes: a task moved back and forth
# without end would otherwise grow past the item limit. Every change is on the activity feed as well.
HISTORY_MAX = 100
# type/subtype (RFC 6838 names), then parameters such as `; charset=utf-8` (RFC 9110 tokens or quoted strings):
# the value becomes S3's Content-Type header, so nothing else, and no CR or LF, may reach it.
_MIME_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_MIME_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*"
_MIME_QUOTED = r'"(?:[ !#-\[\]-~]|\\[ -~])*"'  # printable ASCII; '"' and '\' escaped
_MIME_TYPE = re.compile(rf"{_MIME_NAME}/{_MIME_NAME}(?: *; *{_MIME_TOKEN}=(?:{_MIME_TOKEN}|{_MIME_QUOTED}))*")


@dataclass(frozen=True)
class AttachmentRef:
    """An attachment as stored: its content lives in S3 under `key`, never in DynamoDB."""

    __pydantic_config__ = STORED

    id: str
    filename: str
    mime_type: str
    size: int
    key: str
    created_at: str

    def public(self) -> dict[str, Any]:
        return AttachmentView.model_validate(self).model_dump()


class AttachmentIn(BaseModel):
    """An attachment as sent by an agent or a human; `url` is the server's to set and is refused here."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    id: str = Field(
        description=(
            f"Unique ID for this attachment within the task: any string of 1-{ATTACHMENT_ID_MAX} characters without "
            "control characters, e.g. 'schema v2 (final).sql'"
        )
    )
    filename: str = Field(description='Display filename (e.g., "schema.sql")')
    mimeType: str = Field(description='MIME type (e.g., "text/plain", "image/png")')
    data: str = Field(description="Base64-encoded file content")

    @model_validator(mode="before")
    @classmethod
    def _no_url(cls, value: Any) -> Any:
        if isinstance(value, dict) and "url" in value:
            raise ValueError("url is set by the server only; send the content as base64 in data")
        return value


@dataclass(frozen=True)
class NewAttachment:
    """An attachment as received, decoded and checked."""

    id: str
    filename: str
    mime_type: str
    content: bytes


@dataclass(frozen=True)
class Message:
    __pydantic_config__ = STORED

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
class Entry:
    """A line of a task's activity feed (every change, by whom and when), or a comment on the board's side."""

    __pydantic_config__ = STORED

    id: str
    at: str
    by: str  # "agent" or "human"
    what: str  # created, claimed, progress, completed, status, edited, linked, archived, comment, …
    token_id: str | None = None
    text: str | None = None
    details: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"id": self.id, "at": self.at, "by": self.by, "what": self.what}
        if self.token_id:
            shown["tokenId"] = self.token_id
        if self.text is not None:
            shown["text"] = self.text
        if self.details:
            shown.update(self.details)
        return shown


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion; `met` and `note` are the delivering agent's verdict on it."""

    __pydantic_config__ = STORED

    index: int
    text: str
    met: bool | None = None
    note: str | None = None


@dataclass(frozen=True)
class Link:
    """A relationship as this task sees it: `type` is `blocks`, `relates_to`, `duplicate_of` or an inverse."""

    __pydantic_config__ = STORED

    type: str
    task_id: str


@dataclass(frozen=True)
class Task:
    """A task as every layer sees it; `TaskView` is its public shape, derived from these fields by name."""

    __pydantic_config__ = STORED

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
    # Status changes ever made (the history keeps the latest only): what a status write is conditional on.
    # None on a task stored before it was counted, whose history is whole.
    status_changes: int | None = None
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
    # -- the board (decision 0008): a refinement every AgentRQ task has at its defaults --
    number: int | None = None  # the short identifier's number: WS-<number>
    column: str | None = None  # a column of the status (`domain.columns`); None on tasks made before the board
    summary: str | None = None
    criteria: tuple[Criterion, ...] = ()
    complexity: str | None = None
    priority: str | None = None
    labels: tuple[str, ...] = ()
    due_date: str | None = None
    project_id: str | None = None
    epic_id: str | None = None
    cycle_id: str | None = None
    in_active_cycle: bool = False  # kept with `cycle_id`: the queue ranks the active cycle's tasks first
    parent_id: str | None = None
    assigned_token: str | None = None  # an agent task for one agent token only (the human's choice)
    links: tuple[Link, ...] = ()
    waiting_on: tuple[str, ...] = ()  # the tasks that block this one and are not done yet
    questions: tuple[str, ...] = ()  # a blocker's questions for the human, while it is blocked
    delivery: dict[str, Any] | None = None  # the completing agent's summary: {summary, at, by}
    pending_suggestions: tuple[dict[str, Any], ...] = ()
    archived: dict[str, str] | None = None  # {reason, at, by}: hidden from lists, never deleted
    # Comments on the board's side, counted by the write that adds one (a card shows it without reading them).
    comment_count: int = 0

    @property
    def is_template(self) -> bool:
        return self.cron_schedule is not None

    @property
    def board_column(self) -> str:
        return column_of(self.status, self.column)

    @property
    def identifier(self) -> str | None:
        return f"{IDENTIFIER_PREFIX}{self.number}" if self.number is not None else None

    @property
    def queued(self) -> bool:
        """In the agent's queue: a not-started task for the agent, not a cron template, not archived, waiting on
        no other task, and workable: `ready`, or in `backlog` with criteria (one assigned to a token: either)."""
        if self.assignee != "agent" or self.status != "notstarted" or self.is_template:
            return False
        if self.archived is not None or self.waiting_on:
            return False
        column = self.board_column
        return column == "ready" or (column == "backlog" and (bool(self.criteria) or self.assigned_token is not None))

    @property
    def queue_rank(self) -> str:
        return queue_rank(
            column=self.board_column,
            named=self.assigned_token is not None,
            in_active_cycle=self.in_active_cycle,
            priority=self.priority,
        )

    @classmethod
    def new(
        cls,
        *,
        workspace_id: str,
        by: str,
        now: str,
        token_id: str | None = None,
        created_by: str | None = None,
        **fields: Any,
    ) -> "Task":
        """A task as created, not started, its history beginning with that; `by` made it (a run is made by the
        schedule but is its template's author's: `created_by`)."""
        first = {"status": "notstarted", "at": now, "by": by} | ({"tokenId": token_id} if token_id else {})
        return cls(
            workspace_id=workspace_id,
            status="notstarted",
            created_by=created_by or by,
            created_at=now,
            updated_at=now,
            history=(first,),
            status_changes=0,
            **fields,
        )

    def changed_to(self, entry: dict[str, str]) -> tuple[tuple[dict[str, str], ...], int]:
        """The history and the count of changes after one more: the creation and the latest `HISTORY_MAX - 1`."""
        history = (*self.history, entry)
        if len(history) > HISTORY_MAX:
            history = (history[0], *history[len(history) - HISTORY_MAX + 1 :])
        done = self.status_changes if self.status_changes is not None else len(self.history) - 1
        return history, done + 1

    def public(self) -> dict[str, Any]:
        return TaskView.model_validate(self).model_dump(exclude_none=True)


@dataclass(frozen=True)
class TaskFilter:
    """Which tasks a board listing keeps, besides its status (store/tasks.py makes the filter expression)."""

    column: str | None = None
    epic_id: str | None = None
    project_id: str | None = None
    cycle_id: str | None = None
    label: str | None = None
    assignee: str | None = None  # "human" or "agent"
    assigned_token: str | None = None
    mine: str | None = None  # a token id: tasks assigned to it or claimed by it
    include_archived: bool = False
    words: tuple[str, ...] = ()  # lowercase; each must occur in the task's search text


# -- the public shapes: what agents and the REST API read (api/tasks.py documents its answers with them) ----


class _View(BaseModel):
    """Read from an entity's attributes by their snake_case names; a field the entity gains later passes through.

    Built on first use (`defer_build`): a schedule fire or an event's fan-out stores tasks without ever showing one,
    and the API builds them with its REST routers and tools, before a SnapStart snapshot (decision 0013)."""

    model_config = ConfigDict(
        defer_build=True,
        from_attributes=True,
        validate_by_name=True,
        validate_by_alias=True,
        extra="allow",
        alias_generator=AliasGenerator(validation_alias=to_snake),
    )


class AttachmentView(_View):
    id: str
    filename: str
    mimeType: str
    size: int = Field(description="Bytes of content.")


class ClaimView(_View):
    tokenId: str = Field(description="The agent token that dequeued the task.")
    claimedAt: str
    leaseExpiresAt: str = Field(description="Back in the queue then, unless the agent has started it.")


class CriterionView(_View):
    index: int
    text: str
    met: bool | None = None
    note: str | None = None


class LinkView(_View):
    type: str = Field(description="blocks, blocked_by, relates_to, duplicate_of or duplicated_by")
    taskId: str


class TaskView(_View):
    id: str
    title: str
    body: str
    status: Status
    assignee: Assignee
    createdBy: Author
    createdAt: str
    updatedAt: str
    attachments: list[AttachmentView]
    clearContext: bool | None = Field(None, description="Present (true) when the agent's context is cleared first.")
    cronSchedule: str | None = Field(None, description="Present on a recurring task template.")
    timezone: str | None = Field(None, description="Present with cronSchedule when it is not UTC.")
    runCount: int | None = Field(None, description="On a template: how many runs it has created.")
    nextRunAt: str | None = Field(
        None, validation_alias="next_fire_at", description="On a template: its next fire time (UTC); absent once done."
    )
    templateId: str | None = Field(None, description="On a run: the template that created it.")
    scheduledFor: str | None = Field(
        None, validation_alias="fire_at", description="On a run: the fire time it stands for."
    )
    trigger: dict[str, Any] | None = Field(
        None, description="On a trigger task: the event, its payload, FAQ and workflow run."
    )
    eventId: str | None = Field(None, description="Present when completing the task publishes this event.")
    eventPublicationId: str | None = Field(None, description="Once completing the task has published its event.")
    claim: ClaimView | None = Field(None, description="Present while an agent holds the task from the queue.")
    # The board's refinement (docs/tools.md "The board"); list fields are left out while empty.
    identifier: str | None = Field(None, description="The short identifier, e.g. WS-42; accepted wherever an id is.")
    column: str = Field(validation_alias="board_column", description="The board column, a refinement of status.")
    summary: str | None = None
    criteria: list[CriterionView] | None = Field(None, description="Acceptance criteria, each with its index.")
    complexity: str | None = None
    priority: str | None = None
    labels: list[str] | None = None
    dueDate: str | None = None
    projectId: str | None = None
    epicId: str | None = None
    cycleId: str | None = None
    parentId: str | None = Field(None, description="On a subtask: its parent task.")
    assignedTo: str | None = Field(
        None, validation_alias="assigned_token", description="The one agent token this agent task is for."
    )
    links: list[LinkView] | None = Field(None, description="Relationships, both directions visible.")
    waitingOn: list[str] | None = Field(None, description="The tasks blocking this one that are not done yet.")
    questions: list[str] | None = Field(None, description="While blocked: the agent's questions for the human.")
    delivery: dict[str, Any] | None = Field(None, description="The delivering agent's summary: {summary, at, by}.")
    archived: dict[str, str] | None = Field(None, description="Once archived: {reason, at, by}.")
    commentCount: int | None = Field(None, description="How many comments the task has; absent when none.")

    @model_validator(mode="after")
    def _only_where_they_mean_something(self) -> "TaskView":
        # Assigned only when there is something to drop: an assignment marks a field set, and a REST answer
        # (validated from `public()`, dumped without unset fields) would then show it as null.
        if self.cronSchedule is None and self.runCount is not None:
            self.runCount = None
        if self.clearContext is False:
            self.clearContext = None
        if self.commentCount == 0:
            self.commentCount = None
        for name in ("criteria", "labels", "links", "waitingOn", "questions"):
            if getattr(self, name) == []:
                setattr(self, name, None)
        return self


def identifier_number(ref: str) -> int | None:
    """The number of a short identifier such as `WS-42`, or None when `ref` is not one."""
    match = _IDENTIFIER.fullmatch(ref) if len(ref) <= 16 else None
    return int(match.group(1)) if match else None


ATTACHMENT_SCHEME = "task://"  # an attachment as an MCP resource: task://<taskId>/attachments/<attachmentId>
ATTACHMENT_URI_RULE = (
    "task://<taskId>/attachments/<attachmentId>, the task's id (or short identifier such as WS-42) and the "
    "attachment's id as the task lists it, percent-encoded (e.g. schema%20v2.sql)"
)


def is_attachment_id(value: str) -> bool:
    """Whether `value` can be an attachment's id: what `decode_attachments` accepts, so lookups of anything else
    answer "no such attachment" without reaching a key (a lone surrogate has no UTF-8 at all)."""
    if not 0 < len(value) <= ATTACHMENT_ID_MAX:
        return False
    try:
        check_plain(value, "id")
    except PayloadError:
        return False
    return True


def link_segment(value: str) -> str:
    """`value` as one segment of a URL path or a `task://` URI: percent-encoded, '.' too where the segment is only
    dots (URL parsers would remove it as a dot segment). The console's `linkSegment` does the same."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if value in (".", "..") else encoded


def attachment_uri(task_ref: str, attachment_id: str) -> str:
    """The `task://` resource of an attachment."""
    return f"{ATTACHMENT_SCHEME}{task_ref}/attachments/{link_segment(attachment_id)}"


def attachment_of_uri(uri: str) -> tuple[str, str]:
    """The (task reference, attachment id) `task://<taskId>/attachments/<attachmentId>` names, else `PayloadError`.
    The id is percent-decoded (strictly: invalid UTF-8 names nothing)."""
    parts = uri.removeprefix(ATTACHMENT_SCHEME).split("/")
    if len(parts) == 3 and parts[1] == "attachments":
        task_ref = parts[0]
        try:
            attachment_id = unquote(parts[2], errors="strict")
        except UnicodeDecodeError:
            attachment_id = ""
        named_task = is_id(task_ref) or identifier_number(task_ref) is not None
        if named_task and is_attachment_id(attachment_id):
            return task_ref, attachment_id
    raise PayloadError(f"uri {echo(uri)!r} names no attachment: use {ATTACHMENT_URI_RULE}", field="uri")


def existing_id(task_id: str) -> str:
    """A task id as this server makes them, or NotFound: anything else cannot name a task, and must never
    reach a key (a prefix of a real id would match its conversation, a long one overflow the key size)."""
    if not is_id(task_id):
        raise NotFound(f"no task {echo(task_id)!r} in this workspace")
    return task_id


def decode_attachments(raw: Sequence[AttachmentIn], field_name: str = "attachments") -> list[NewAttachment]:
    """Decode and check every attachment before anything is stored; the first problem is refused."""
    if len(raw) > MAX_ATTACHMENTS:
        raise PayloadError(f"{field_name} has {len(raw)} files; at most {MAX_ATTACHMENTS} per call", field=field_name)
    decoded: list[NewAttachment] = []
    seen: set[str] = set()
    total = 0
    for index, item in enumerate(raw):
        where = f"{field_name}[{index}]"
        ident, filename, mime_type, data = item.id, item.filename, item.mimeType, item.data
        if not is_attachment_id(ident):
            # any string, as AgentRQ's (links percent-encode it); no control characters, since people read it
            raise PayloadError(f"{where}.id must be {ATTACHMENT_ID_RULE}, e.g. 'schema'", field=f"{where}.id")
        if ident in seen:
            raise PayloadError(f"{where}.id {echo(ident)!r} is used twice in this call", field=f"{where}.id")
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


VIEWS = (AttachmentView, ClaimView, CriterionView, LinkView, TaskView)


def build_views() -> None:
    """Build the views now (they are built on first use): before a SnapStart snapshot, with everything else."""
    for view in VIEWS:
        view.model_rebuild()
