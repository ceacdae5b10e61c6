"""Notices when the client of a request hangs up, so that a wait serving it (`elicit`, a site-tool call, a
bridge long-poll) stops reading the store for nobody.

An ASGI server says so with `http.disconnect` from `receive`, once the body has been read. Nothing else
reads `receive` after the body: Starlette's routes do not, nor does the MCP SDK in its JSON-response mode
(it reads the body, then awaits the tool's result). So a wait listens itself, during its pauses
(`blocking.pause`), and costs nothing to a request that does not wait.

Under Mangum on Lambda a hang-up cannot be seen: the Function URL (or API Gateway) holds the
connection and the invocation runs until it returns, so `receive` gives `http.disconnect` only after
the response. There the waits are bounded by the invocation's deadline instead (`blocking.wait_ends_at`).
"""

import anyio
from starlette.types import Message, Receive, Scope, Send

from agent_workspace.api.middleware import HttpMiddleware
from agent_workspace.blocking import watching


class HangupWatch(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = _Client(receive)
        with watching(client):
            await self._app(scope, client.receive, send)


class _Client:
    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._body_read = False
        self._gone = False

    @property
    def gone(self) -> bool:
        return self._gone

    async def receive(self) -> Message:
        """What the app reads: passed through, noting the end of the body and a hang-up."""
        message = await self._receive()
        self._note(message)
        return message

    async def wait(self) -> None:
        """Return when the client hangs up (cancelled by the caller's time limit meanwhile)."""
        if not self._body_read:
            # The body is the app's to read; taking a part of it would lose it. Every body is read before a
            # route runs (RequestBodyLimitMiddleware reads it whole), so this is a safeguard, not the rule.
            await anyio.sleep_forever()
        while not self._gone:
            self._note(await self._receive())

    def _note(self, message: Message) -> None:
        if message["type"] == "http.disconnect":
            self._gone = True
        elif not message.get("more_body", False):
            self._body_read = True
