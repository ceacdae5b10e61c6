"""One structured log line per request for the local server: method, path, status, never the query.

It replaces uvicorn's access log, which prints the query string (where a misplaced token would be).
In Lambda the platform logs each invocation already, and a warm call should not pay for a second line.
"""

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_workspace.observability import logger


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
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
                    "path": scope["path"],
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )
