"""API Gateway's WebSocket API, locally: what the deployed stack's `PushApi` does, in front of the app under uvicorn.

On AWS, API Gateway holds the sockets, calls the push function for `$connect`, `$disconnect` and `$default`, and
takes the events function's posts at `@connections/<id>`. Here this ASGI wrapper plays that part with the same
handlers (`workers.sockets.handle`, given API Gateway's event shape) and the same poster (`store.push.
ConnectionPoster`, boto3's `apigatewaymanagementapi` client signing its POST), so the ticket rules, the message
format and the sender's code path are the deployed ones. API Gateway's limits apply too: a socket idle 10 minutes
or open 2 hours is closed (1001), a client frame over 32 KB closes it (1009), a post over 128 KB is refused.

The `@connections` endpoint answers only requests signed with this process's own secret (`local.gate`), as API
Gateway answers only IAM-signed ones: a web page that finds the port cannot post into another client's socket.
"""

import asyncio
import io
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_workspace.domain import push as rules
from agent_workspace.local.gate import signed_by_this_process
from agent_workspace.runtime import Runtime
from agent_workspace.workers import sockets

PATH = "/push"
CONNECTIONS = f"{PATH}/@connections/"
IDLE_SECONDS = 10 * 60  # API Gateway's idle timeout
LIFE_SECONDS = 2 * 3600  # and its longest connection
POST_BYTES_MAX = 128 * 1024  # a message API Gateway takes from `PostToConnection`
GOING_AWAY, TOO_BIG = 1001, 1009
UVICORN_WS = "websockets-sansio"  # uvicorn's protocol on the `websockets` package (its older one is deprecated)


def configure(runtime: Runtime, netloc: str) -> None:
    """Point the runtime's push settings at this gateway on `netloc` (host:port): clients are handed `ws://…/push`
    in their tickets, and the events worker posts to `http://…/push/@connections/<id>`."""
    runtime.settings = runtime.settings.model_copy(
        update={"push_url": f"ws://{netloc}{PATH}", "push_callback_url": f"http://{netloc}{PATH}"}
    )


@dataclass
class _Socket:
    """One open socket: its ASGI `send`, serialised (a post and a pong may come at once), and when it last spoke."""

    send: Send
    loop: asyncio.AbstractEventLoop
    opened: float = field(default_factory=time.monotonic)
    active: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    closed: bool = False

    async def text(self, data: str) -> bool:
        async with self.lock:
            if self.closed:
                return False
            await self.send({"type": "websocket.send", "text": data})
            self.active = time.monotonic()
            return True

    async def close(self, code: int) -> None:
        async with self.lock:
            if not self.closed:
                self.closed = True
                await self.send({"type": "websocket.close", "code": code})


class PushGateway:
    """ASGI: the WebSocket at `/push` and its `@connections` endpoint; every other request goes to `app`."""

    def __init__(self, app: ASGIApp, runtime: Runtime) -> None:
        self._app = app
        self._rt = runtime
        self._sockets: dict[str, _Socket] = {}
        self.idle_seconds: float = IDLE_SECONDS
        self.life_seconds: float = LIFE_SECONDS

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            if scope["path"] == PATH:
                await self._socket(scope, receive, send)
            else:  # the app serves no WebSocket: refuse the upgrade (403)
                await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http" and scope["path"].startswith(CONNECTIONS):
            await self._post(scope, receive, send)
            return
        await self._app(scope, receive, send)

    @property
    def connection_ids(self) -> list[str]:
        return list(self._sockets)

    def close(self, connection_id: str | None = None, code: int = GOING_AWAY) -> int:
        """Close one socket, or every one, from the server's side (as API Gateway cuts one); from any thread.
        Returns how many were closed."""
        chosen = [connection_id] if connection_id is not None else list(self._sockets)
        closed = 0
        for name in chosen:
            socket = self._sockets.get(name)
            if socket is not None:
                asyncio.run_coroutine_threadsafe(socket.close(code), socket.loop).result(timeout=5)
                closed += 1
        return closed

    # -- the socket ---------------------------------------------------------------------------------------------

    async def _socket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        connection_id = secrets.token_urlsafe(12)  # API Gateway's shape: 16 characters
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        answer = await self._route("$connect", connection_id, queryStringParameters=query or None)
        if answer.get("statusCode") != 200:
            await _refuse(scope, send, int(answer.get("statusCode") or 403))
            return
        socket = _Socket(send, asyncio.get_running_loop())
        self._sockets[connection_id] = socket
        try:
            await send({"type": "websocket.accept"})
            await self._serve(connection_id, socket, receive)
        finally:
            self._sockets.pop(connection_id, None)
            socket.closed = True
            await self._route("$disconnect", connection_id)

    async def _serve(self, connection_id: str, socket: _Socket, receive: Receive) -> None:
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, self._deadline(socket) - time.monotonic()))
            except TimeoutError:
                if time.monotonic() >= self._deadline(socket):  # else a post made it active meanwhile: wait on
                    await socket.close(GOING_AWAY)
                    return
                continue
            if message["type"] == "websocket.disconnect":
                return
            frame = message.get("text") if message.get("text") is not None else message.get("bytes")
            if frame is None:
                continue
            socket.active = time.monotonic()
            if len(frame) > rules.FRAME_BYTES_MAX:
                await socket.close(TOO_BIG)
                return
            answer = await self._route("$default", connection_id, body=frame)
            if answer.get("body"):
                await socket.text(answer["body"])

    def _deadline(self, socket: _Socket) -> float:
        """When API Gateway would close it: idle too long, or open too long."""
        return min(socket.active + self.idle_seconds, socket.opened + self.life_seconds)

    async def _route(self, route: str, connection_id: str, **rest: Any) -> dict[str, Any]:
        """API Gateway's event for `route`, handled by the push function's own code (blocking calls: a thread)."""
        event = {"requestContext": {"routeKey": route, "connectionId": connection_id, "eventType": route}, **rest}
        if isinstance(event.get("body"), bytes):
            event["body"] = event["body"].decode("utf-8", errors="replace")
        return await anyio.to_thread.run_sync(sockets.handle, event, self._rt)

    # -- @connections -------------------------------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive, POST_BYTES_MAX + 1)
        if scope["method"] != "POST" or not signed_by_this_process(_environ(scope, body)):
            await _answer(send, 403, "ForbiddenException", "not signed with this process's credentials")
            return
        if len(body) > POST_BYTES_MAX:
            await _answer(send, 413, "PayloadTooLargeException", f"a message is at most {POST_BYTES_MAX} bytes")
            return
        socket = self._sockets.get(unquote(scope["path"][len(CONNECTIONS) :]))
        if socket is None or not await socket.text(body.decode("utf-8", errors="replace")):
            await _answer(send, 410, "GoneException", "no such connection")
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


async def _refuse(scope: Scope, send: Send, status: int) -> None:
    """A refused upgrade, as API Gateway answers it: the bare HTTP status, no socket."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": []})
        await send({"type": "websocket.http.response.body", "body": b""})
    else:
        await send({"type": "websocket.close", "code": 1008})


async def _body(receive: Receive, most: int) -> bytes:
    """The request body, read no further than `most` bytes."""
    chunks, size = [], 0
    while True:
        message = await receive()
        chunk = message.get("body", b"")
        chunks.append(chunk[: max(0, most - size)])
        size += len(chunk)
        if size >= most or not message.get("more_body"):
            return b"".join(chunks)


def _environ(scope: Scope, body: bytes) -> dict[str, Any]:
    """The WSGI environ `local.gate` checks a signature in, from the ASGI scope."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "RAW_URI": scope.get("raw_path", scope["path"].encode()).decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "wsgi.input": io.BytesIO(body),
    }
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        key = name if name in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{name}"
        environ[key] = raw_value.decode("latin-1")
    environ["CONTENT_LENGTH"] = str(len(body))
    return environ


async def _answer(send: Send, status: int, error_type: str, message: str) -> None:
    """An error the way API Gateway's management API answers, so boto3 raises it under its own code."""
    body = json.dumps({"message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"x-amzn-errortype", error_type.encode()),
               (b"content-length", str(len(body)).encode())]  # fmt: skip
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
