"""POST /mcp: authenticate, then let the SDK serve one stateless Streamable HTTP exchange.

Each request gets its own session manager. Mangum runs the app's lifespan on every invocation and a
manager's `run()` can be entered only once, so the SDK's "enter run() in the lifespan" recipe breaks
from the second warm Lambda call on; a per-request manager has no such state to outlive.
"""

import json
import uuid
from collections import deque
from typing import Any

import pydantic_core
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.requests import HTTPConnection
from starlette.types import Message, Receive, Scope, Send

from agent_workspace.blocking import invocation_deadline, run_blocking
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.domain.text import echo
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.mcp_server.server import REQUEST_STATE_KEY
from agent_workspace.mcp_server.surfaces import SURFACES
from agent_workspace.runtime import Runtime
from agent_workspace.tool_registry import Call
from agent_workspace.web.auth import authenticate, base_url, error_headers
from agent_workspace.web.problems import send_problem

# Host and Origin are checked by `api.guard` for the whole app; the SDK's own check defaults to
# localhost-only Hosts, which would answer 421 behind a Function URL.
_NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)

# What a malformed body is told. The SDK would answer with pydantic's own text (model and type names, the
# input echoed, links to pydantic's docs) or the JSON parser's; these say what is wrong in JSON-RPC's terms.
NOT_JSON = "Parse error: the body is not valid JSON"
BATCH = "Invalid Request: JSON-RPC batches (a JSON array) are not served; send one message per request"
NOT_A_MESSAGE = (
    'Invalid Request: the body must be one JSON-RPC 2.0 message: an object with "jsonrpc": "2.0" and a string '
    '"method", plus an "id" (a string or an integer) for a request; "params", if sent, is an object'
)


class McpEndpoint:
    def __init__(self, server: Server[Any], runtime: Runtime) -> None:
        self._server = server
        self._runtime = runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            # In stateless mode a GET would open an SSE stream that never ends: a Lambda would hang until timeout.
            await send_problem(send, 405, "only POST is served at /mcp", [(b"allow", b"POST")])
            return
        connection = HTTPConnection(scope)
        try:
            principal = await run_blocking(authenticate, self._runtime, connection.headers, TokenKind.AGENT)
        except WorkspaceError as error:
            headers = error_headers(self._runtime, connection, error)
            extra = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
            await send_problem(send, error.http_status, error.message, extra)
            return
        body, receive = await _buffered(scope, receive, self._runtime.settings.max_request_bytes)
        refusal = _refusal(body) if body is not None else None
        if refusal is not None:
            await _send_jsonrpc_error(send, *refusal)
            return
        scope.setdefault("state", {})[REQUEST_STATE_KEY] = Call(
            principal,
            self._runtime,
            _request_id(scope),
            invocation_deadline(scope),
            base_url(self._runtime, connection),
        )
        manager = StreamableHTTPSessionManager(
            self._server,
            json_response=True,
            stateless=True,
            security_settings=_NO_SDK_HOST_CHECK,
            max_request_body_size=self._runtime.settings.max_request_bytes,
        )
        async with manager.run():
            await manager.handle_request(scope, receive, send)


class NotServed:
    """A path under /mcp that no reference has: 404 for every method, before any token is looked at. (An ASGI
    object, not a function: Starlette would serve a function as a GET-only endpoint and answer 405.)"""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        paths = ", ".join(s.path for s in SURFACES)
        await send_problem(send, 404, f"no MCP server at {echo(scope['path'])}; MCP is served at {paths}")


not_served = NotServed()


async def _buffered(scope: Scope, receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The whole request body, and a `receive` that hands the SDK the same messages again.

    None when the body is over `limit` (declared or as it arrives) or the client went away: the SDK's own
    limit then answers 413, and a hang-up ends the request as before."""
    declared = dict(scope.get("headers") or []).get(b"content-length", b"")
    if declared.isdigit() and int(declared) > limit:
        return None, receive
    messages: deque[Message] = deque()
    size, complete = 0, False
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            break
        if not message.get("more_body", False):
            complete = True
            break

    async def replay() -> Message:
        return messages.popleft() if messages else await receive()

    body = b"".join(m.get("body", b"") for m in messages) if complete else None
    return body, replay


def _refusal(body: bytes) -> tuple[int, str] | None:
    """The JSON-RPC error code and message for a body that is not one JSON-RPC message; None for one that is.

    The same parser and model as the SDK's, so what passes here is what the SDK would serve."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:  # not JSON, not UTF-8, nested past the parser's depth limit
        return PARSE_ERROR, NOT_JSON
    if isinstance(message, list):
        return INVALID_REQUEST, BATCH
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return INVALID_REQUEST, NOT_A_MESSAGE
    return None


async def _send_jsonrpc_error(send: Send, code: int, message: str) -> None:
    """A JSON-RPC error without an id (none could be read), with 400 as the SDK answers a malformed body."""
    data = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


def _request_id(scope: Scope) -> str:
    lambda_context = scope.get("aws.context")
    return getattr(lambda_context, "aws_request_id", None) or uuid.uuid4().hex
