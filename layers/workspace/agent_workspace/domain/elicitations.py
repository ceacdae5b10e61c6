"""Questions an agent asks its human inside a task, and the rules for asking and answering them.

MCP's own elicitation needs a server→client request, which stateless Streamable HTTP cannot carry;
here a question is a durable record that the human answers over REST while the agent waits.
"""

from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.text import check_plain

MAX_TIMEOUT_SECONDS = 3600
MESSAGE_MAX = 4000
URL_MAX = 2048
# Both stored with the question (its item, and a line of the conversation each): with the message, well within
# DynamoDB's 400 KB per item. An answer nests at most a few levels below its item's top.
REQUESTED_SCHEMA_BYTES_MAX = 64 * 1024
ANSWER_BYTES_MAX = 64 * 1024
ANSWER_DEPTH_MAX = 16
ANSWER_ACTIONS = ("accept", "decline", "cancel")
_PRIMITIVES = ("string", "number", "integer", "boolean")


@dataclass(frozen=True)
class Elicitation:
    id: str
    workspace_id: str
    task_id: str
    message: str
    mode: str  # "form" or "url"
    status: str  # "pending", "answered", "expired"
    created_at: str
    expires_at: str
    requested_schema: dict[str, Any] | None = None
    url: str | None = None
    answer: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "taskId": self.task_id,
            "message": self.message,
            "mode": self.mode,
            "requestedSchema": self.requested_schema,
            "url": self.url,
            "status": self.status,
            "createdAt": self.created_at,
            "expiresAt": self.expires_at,
        }


def question_mode(mode: str | None, requested_schema: dict[str, Any] | None, url: str | None) -> str:
    """How the question is asked: requestedSchema means a form, url a link to open, so `mode` may be left out;
    given, it must agree. Only a contradiction is refused, naming the fields that clash."""
    if requested_schema is not None and url is not None:
        raise PayloadError(
            "requestedSchema and url exclude each other: send requestedSchema for a form (mode 'form') "
            "or url for a link (mode 'url'), not both",
            field="url",
        )
    if mode == "form" and requested_schema is None:
        clash = ", not url (which means mode 'url')" if url is not None else ""
        raise PayloadError(f"form mode needs requestedSchema{clash}", field="requestedSchema")
    if mode == "url" and url is None:
        clash = ", not requestedSchema (which means mode 'form')" if requested_schema is not None else ""
        raise PayloadError(f"url mode needs url{clash}", field="url")
    if requested_schema is not None:
        return "form"
    if url is not None:
        return "url"
    raise PayloadError(
        "missing requestedSchema (a form) or url (a link) to ask with (or elicitationId to resume)",
        field="requestedSchema",
    )


def check_requested_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A flat object of primitive fields, as MCP elicitation allows and a form can render; stored with the
    question and its line in the conversation, and applied to the human's answer (`domain.schemas`)."""
    from agent_workspace.domain.schemas import check_schema

    check_schema(schema, "requestedSchema", REQUESTED_SCHEMA_BYTES_MAX)
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or not properties:
        raise PayloadError(
            'requestedSchema must be {"type": "object", "properties": {...}} with at least one property',
            field="requestedSchema",
        )
    for name, prop in properties.items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if kind not in _PRIMITIVES:
            raise PayloadError(
                f"requestedSchema.properties.{name} must have type string, number, integer or boolean",
                field=f"requestedSchema.properties.{name}",
            )
    return schema


def check_url(url: str) -> str:
    if not url.startswith(("https://", "http://")) or len(url) > URL_MAX or any(c.isspace() for c in url):
        raise PayloadError(f"url must be an http(s) link of at most {URL_MAX} characters", field="url")
    return check_plain(url, "url")  # shown to the human as the link to open: no bidi override may disguise it


def validate_answer(elicitation: Elicitation, action: str, content: Any) -> dict[str, Any]:
    """The answer as the agent will receive it, or `PayloadError` naming what does not fit."""
    if action not in ANSWER_ACTIONS:
        raise PayloadError(f"action must be one of {', '.join(ANSWER_ACTIONS)}", field="action")
    if action != "accept":
        if content is not None:
            raise PayloadError(f"content is only sent with accept, not {action}", field="content")
        return {"action": action}
    if elicitation.mode == "url":
        if content is not None:
            raise PayloadError("a url question is accepted without content", field="content")
        return {"action": "accept"}
    if not isinstance(content, dict):
        raise PayloadError("accept needs content: an object matching requestedSchema", field="content")
    from agent_workspace.domain.json_values import check_json
    from agent_workspace.domain.schemas import first_mismatch

    check_json(content, "content", max_bytes=ANSWER_BYTES_MAX, max_depth=ANSWER_DEPTH_MAX)
    mismatch = first_mismatch(content, elicitation.requested_schema or {}, "content", "requestedSchema")
    if mismatch is not None:
        parts = [*mismatch.path, mismatch.missing] if mismatch.missing else mismatch.path
        field = ".".join(["content", *map(str, parts)])
        raise PayloadError(f"{field}: {mismatch.message}", field=field)
    return {"action": "accept", "content": content}
