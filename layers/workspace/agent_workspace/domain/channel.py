"""What a Claude Code channel bridge hears (issue 19): events for the agent of a workspace, and the permission
questions the bridge relays to the human."""

from dataclasses import dataclass, field
from typing import Any

from agent_workspace.domain.stored import STORED

EVENT_KINDS = ("task", "reply", "answer", "reopened", "assigned", "trigger", "permission")
EVENTS_KEPT_DAYS = 7
EVENTS_PER_POLL = 50
BACKLOG_HOURS = 24  # a bridge without a cursor starts with the events of the last day
CONTENT_MAX = 4_000  # what one push shows; the agent reads the rest with `task get`

PERMISSION_DECISIONS = ("allow", "deny", "always")
PERMISSION_SECONDS = 600  # a question nobody answered by then: Claude Code has moved on
TOOL_NAME_MAX = 200
REQUEST_ID_MAX = 100
DESCRIPTION_MAX = 2_000
INPUT_PREVIEW_MAX = 8_000


@dataclass(frozen=True)
class ChannelEvent:
    __pydantic_config__ = STORED

    id: str
    kind: str
    content: str
    at: str
    task_id: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    to_token: str | None = None  # a permission verdict: only the bridge of the token that asked hears it

    def heard_by(self, token_id: str) -> bool:
        return self.to_token is None or self.to_token == token_id

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "taskId": self.task_id, "content": self.content,
                "meta": self.meta, "at": self.at}  # fmt: skip


@dataclass(frozen=True)
class PermissionQuestion:
    """Claude wants to use a tool: the human allows it, denies it, or always allows that tool in the workspace."""

    __pydantic_config__ = STORED

    id: str
    request_id: str
    tool_name: str
    description: str
    input_preview: str
    created_at: str
    closes_at: str  # (not `expiresAt`: that is the item's TTL attribute)
    status: str = "pending"  # pending, allowed, denied
    task_id: str | None = None
    decided_at: str | None = None
    token_id: str | None = None  # the agent token whose bridge asked: the verdict goes to it alone

    def public(self, now: str) -> dict[str, Any]:
        status = "expired" if self.status == "pending" and self.closes_at <= now else self.status
        shown = {
            "id": self.id,
            "requestId": self.request_id,
            "toolName": self.tool_name,
            "description": self.description,
            "inputPreview": self.input_preview,
            "taskId": self.task_id,
            "status": status,
            "createdAt": self.created_at,
            "expiresAt": self.closes_at,
        }
        return shown | ({"decidedAt": self.decided_at} if self.decided_at else {})
