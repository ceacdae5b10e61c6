"""One structured log line per request for the local server: method, path, status, never the query.

It replaces uvicorn's access log, which prints the query string (where a misplaced token would be).
In Lambda the platform logs each invocation already, and a warm call should not pay for a second line.
A path that carries a secret (a signed link's token) is logged with the secret redacted (`loggable_path`).
"""

import time

from starlette.types import Message, Receive, Scope, Send

from agent_workspace.api.middleware import HttpMiddleware
from agent_workspace.observability import logger

# Paths whose rest is a signed link's token, a bearer credential for what it links to: never logged.
SECRET_PATH_PREFIXES = ("/answer/", "/confirm-email/")
REDACTED = "<redacted>"


def loggable_path(path: str) -> str:
    """`path` as a log line may show it: a signed link's token replaced by a marker."""
    for prefix in SECRET_PATH_PREFIXES:
        if path.startswith(prefix):
            return prefix + REDACTED
    return path


class AccessLog(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        status = 500

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, record_status)
        finally:
            logger.info(
                "request",
                extra={
                    "method": scope["method"],
                    "path": loggable_path(scope["path"]),
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )
