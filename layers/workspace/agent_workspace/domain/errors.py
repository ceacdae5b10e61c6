"""Typed errors raised by domain and store code.

One adapter turns them into MCP tool errors (`mcp_server.dispatch`) and one into HTTP responses
(`api.errors`), so the message a caller sees is decided here, once.
"""

from typing import Any


class WorkspaceError(Exception):
    """Base of every error a caller may see; `message` is safe to show."""

    http_status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class PayloadError(WorkspaceError):
    """The input is malformed: a field is missing, unknown, of the wrong type or out of range."""

    http_status = 422

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NotFound(WorkspaceError):
    http_status = 404


class Conflict(WorkspaceError):
    """A conditional write lost a race or the item is not in the state the caller assumed.

    `reasons` holds, for a cancelled transaction, each item's cancellation code (None where it passed),
    so a caller can tell which condition failed.
    """

    http_status = 409

    def __init__(self, message: str, reasons: tuple[str | None, ...] = ()) -> None:
        super().__init__(message)
        self.reasons = reasons


class TooLarge(WorkspaceError):
    """One item of a listing is too large for any page (`domain.paging`): sent anyway, the response would
    pass Lambda's 6 MB limit and reach the caller as a bare 502. `cursor` resumes after the item."""

    http_status = 422

    def __init__(self, message: str, cursor: str) -> None:
        super().__init__(message)
        self.cursor = cursor


class Forbidden(WorkspaceError):
    http_status = 403


class Unauthorized(WorkspaceError):
    http_status = 401


class Unavailable(WorkspaceError):
    """A dependency (DynamoDB, S3, SQS) failed in a way that is worth retrying: busy, or out of reach.

    `retry_after` (seconds) is what the HTTP answer's Retry-After says."""

    http_status = 503
    retry_after = 2


class Failed(WorkspaceError):
    """Something outside this server refused or failed the action: the human denied it, a site timed out."""

    http_status = 424


class RateLimited(WorkspaceError):
    """A token made more requests in the current window than its limit allows; `retry_after` is in seconds."""

    http_status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def field_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as the field path an error names: `attachments[0].id`."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "payload"
