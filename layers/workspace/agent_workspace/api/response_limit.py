"""The last guard before Lambda's 6 MB response limit: an answer too large becomes a problem, never a 502.

Listings fill their pages by bytes (domain/paging.py); this catches whatever else could grow past the
limit (a listing without pages, a large document), for every route, in one place. Responses here are
JSON built in memory, so holding the body until it is complete costs nothing a Lambda would not pay.
"""

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_workspace.api.middleware import HttpMiddleware
from agent_workspace.domain.paging import ANSWER_MAX, body_wire_size
from agent_workspace.web.problems import send_problem

_MOST_GROWTH = 6


class ResponseSizeLimit(HttpMiddleware):
    def __init__(self, app: ASGIApp, max_bytes: int = ANSWER_MAX) -> None:
        super().__init__(app)
        self._max = max_bytes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: Message | None = None
        chunks: list[bytes] = []

        async def hold(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks)
            # A byte grows to at most 6 on the way out (a control character as \u00XX), plus the quotes:
            # most bodies are far below the limit and need no second encoding to prove it.
            size = len(body) * _MOST_GROWTH + 2
            if size > self._max and (size := body_wire_size(body)) > self._max:
                where = f"{scope['method']} {scope['path']}"
                await send_problem(
                    send,
                    422,
                    f"{where}: the answer would take {size:,} bytes, more than one response may carry "
                    f"({self._max:,}); ask for less: a filter, a smaller limit, or one item at a time",
                )
                return
            assert start is not None
            await send(start)
            await send({"type": "http.response.body", "body": body})

        await self._app(scope, receive, hold)
