"""What the `task` tool's actions answer (services.tasks, task_board and elicitations build them); create,
updateStatus and reply answer text.

Every action that answers a task answers one model, `TaskAnswer`: the REST view of a task (domain.tasks.TaskView),
closed, with what some actions add besides the task optional in it; one copy of the task's ~40 fields instead of
one per action keeps the listing small.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field

from agent_workspace.domain.columns import Complexity, Priority
from agent_workspace.domain.tasks import (
    Assignee,
    AttachmentView,
    Author,
    ClaimView,
    CriterionView,
    LinkView,
    Status,
    TaskView,
)
from agent_workspace.tool_registry import Answer

# A task's parts as the REST views declare them (domain.tasks), closed: one declaration of each shape.
_CLOSED = ConfigDict(extra="forbid")


class Attachment(AttachmentView):
    """A task's or message's file; getAttachment adds its url, or with format base64 its content as data."""

    model_config = _CLOSED
    url: str | None = None
    data: str | None = None


class Claim(ClaimView):
    """The agent token holding the task; heartbeatAt once it reported progress."""

    model_config = _CLOSED
    heartbeatAt: str | None = None


class Criterion(CriterionView):
    """An acceptance criterion, with the delivering agent's verdict."""

    model_config = _CLOSED


class Link(LinkView):
    """blocks, blocked_by, relates_to, duplicate_of or duplicated_by taskId."""

    model_config = _CLOSED


class Delivery(Answer):
    """The completing agent's summary; tokenId null when the human completed it."""

    summary: str
    at: str
    by: str
    tokenId: str | None


class Archived(Answer):
    """Why, when and by whom."""

    reason: str
    at: str
    by: str


class StatusChange(Answer):
    """tokenId: null for the human's changes, absent on a creation without one."""

    status: Status
    at: str
    by: Author
    tokenId: str | None = None


class HumanAnswer(Answer):
    """The human's answer to a question."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


class Message(Answer):
    """A line of the conversation; a question, answer or site-tool call adds its particulars."""

    id: str
    from_: str = Field(alias="from")
    kind: Literal["message", "question", "answer", "siteCall", "siteCallDecision"]
    text: str
    attachments: list[Attachment]
    createdAt: str
    elicitationId: str | None = None
    mode: Literal["form", "url"] | None = None
    requestedSchema: dict[str, Any] | None = None
    url: str | None = None
    answer: HumanAnswer | None = None
    siteCallId: str | None = None
    site: str | None = None
    tool: str | None = None
    arguments: Any = None
    decision: str | None = None


class Conversation(Answer):
    """Messages oldest first."""

    messages: list[Message]
    nextCursor: str | None


class Policy(Answer):
    """How agents work in this workspace."""

    supervised: bool
    signOff: bool


class UnblockedTask(Answer):
    """A task that waits on nothing more."""

    id: str
    identifier: str | None
    title: str
    column: str


class Suggestion(Answer):
    """An agent's proposal, waiting for the human."""

    id: str
    at: str
    by: str
    tokenId: str | None
    summary: str | None = None
    criteria: list[str] | None = None


class Activity(Answer):
    """A line of the activity feed, or a comment; what changed adds its particulars."""

    id: str
    at: str
    by: str
    what: str
    tokenId: str | None = None
    text: str | None = None
    status: Status | None = None
    column: str | None = None
    criteriaMet: int | None = None
    criteriaGiven: int | None = None
    questions: list[str] | None = None
    fields: list[str] | None = None
    type: str | None = None
    otherTaskId: str | None = None
    suggestionId: str | None = None


class TaskAnswer(TaskView):
    """Answers get, propose, edit, release, archive, suggest, claim, complete, reportBlocker and show: a task."""

    # Task.public() as TaskView declares it (unset fields are absent, never null), closed, with its parts typed
    # as exactly as the answers are (narrower than the view's: mypy's ignores below); then what some actions add.
    model_config = _CLOSED
    attachments: list[Attachment]  # type: ignore[assignment]
    claim: Claim | None = None
    criteria: list[Criterion] | None = None  # type: ignore[assignment]
    complexity: Complexity | None = None
    priority: Priority | None = None
    links: list[Link] | None = None  # type: ignore[assignment]  # show: always, [] when none
    delivery: Delivery | None = None  # type: ignore[assignment]
    archived: Archived | None = None  # type: ignore[assignment]
    # get with includeConversation
    history: list[StatusChange] | None = None
    conversation: Conversation | None = None
    # show (comments unless includeComments is false)
    description: str | None = None
    pendingSuggestions: list[Suggestion] | None = None
    activity: list[Activity] | None = None
    comments: list[Activity] | None = None
    # show, claim and complete
    workspacePolicy: Policy | None = None
    # claim: next when the task has neither summary nor criteria
    prepQueued: bool | None = None
    next: str | None = None
    # complete
    unblocked: list[UnblockedTask] | None = None
    # reportBlocker
    notified: str | None = None


class TaskPage(Answer):
    """Answers list; nextCursor null on the last page."""

    tasks: list[TaskAnswer]
    nextCursor: str | None


class NextTask(Answer):
    """Answers next: the task claim would take first, null when none."""

    task: TaskAnswer | None
    workspacePolicy: Policy


class ProgressAnswer(Answer):
    """Answers progress: the claim renewed until leaseExpiresAt."""

    taskId: str
    recorded: bool
    leaseExpiresAt: str


class LinkAnswer(Answer):
    """Answers link; created false when the link existed already."""

    taskId: str
    type: Literal["blocks", "relates_to", "duplicate_of"]
    otherTaskId: str
    created: bool


class UnlinkAnswer(Answer):
    """Answers unlink; removed false when there was no such link."""

    taskId: str
    type: Literal["blocks", "relates_to", "duplicate_of"]
    otherTaskId: str
    removed: bool


class CommentAnswer(Answer):
    """Answers comment."""

    taskId: str
    id: str
    at: str
    by: str
    what: Literal["comment"]
    tokenId: str | None = None
    text: str


class SearchHit(Answer):
    """A task found; url opens it in the console."""

    id: str
    title: str
    url: str


class SearchAnswer(Answer):
    """Answers search."""

    results: list[SearchHit]


class FetchMetadata(Answer):
    """The fetched task's board fields; unset ones are absent."""

    identifier: str | None = None
    summary: str | None = None
    status: Status
    column: str
    priority: Priority | None = None
    complexity: Complexity | None = None
    labels: list[str] | None = None
    dueDate: str | None = None
    projectId: str | None = None
    epicId: str | None = None
    cycleId: str | None = None
    parentId: str | None = None
    assignee: Assignee
    createdAt: str
    updatedAt: str


class FetchAnswer(Answer):
    """Answers fetch: the task's description and criteria as text, its board fields as metadata."""

    id: str
    title: str
    text: str
    url: str
    metadata: FetchMetadata


class ElicitAnswer(Answer):
    """Answers elicit: the human's answer, or pending with the question to resume."""

    action: Literal["accept", "decline", "cancel", "pending"]
    content: dict[str, Any] | None = None
    elicitationId: str | None = None
    expiresAt: str | None = None
    next: str | None = None
