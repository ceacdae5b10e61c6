"""Questions an agent asks its human inside a task, and the rules for asking and answering them.

MCP's own elicitation needs a server→client request, which stateless Streamable HTTP cannot carry;
here a question is a durable record that the human answers over REST while the agent waits.
"""

from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.errors import PayloadError

MAX_TIMEOUT_SECONDS = 3600
MESSAGE_MAX = 4000
URL_MAX = 2048
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


def check_requested_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A flat object of primitive fields, as MCP elicitation allows and a form can render."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise PayloadError(
            f"requestedSchema is not a valid JSON Schema: {error.message}", field="requestedSchema"
        ) from None
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
    return url


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
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(elicitation.requested_schema or {}).iter_errors(content), key=str)
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.absolute_path)
        if first.validator == "required":
            missing = first.message.split("'")[1] if "'" in first.message else ""
            where = missing or where
        field = f"content.{where}" if where else "content"
        raise PayloadError(f"{field}: {first.message}", field=field)
    return {"action": "accept", "content": content}
