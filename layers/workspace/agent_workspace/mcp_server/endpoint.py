"""POST /mcp: authenticate, then let the SDK serve one stateless Streamable HTTP exchange.

Each request gets its own session manager. Mangum runs the app's lifespan on every invocation and a
manager's `run()` can be entered only once, so the SDK's "enter run() in the lifespan" recipe breaks
from the second warm Lambda call on; a per-request manager has no such state to outlive.
"""

import uuid
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import HTTPConnection
from starlette.types import Receive, Scope, Send

from agent_workspace.api.asgi_json import send_problem
from agent_workspace.api.auth import authenticate, base_url, error_headers
from agent_workspace.blocking import invocation_deadline, run_blocking
from agent_workspace.domain.errors import WorkspaceError
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.mcp_server.registry import Call
from agent_workspace.mcp_server.server import REQUEST_STATE_KEY
from agent_workspace.runtime import Runtime

# Host and Origin are checked by `api.guard` for the whole app; the SDK's own check defaults to
# localhost-only Hosts, which would answer 421 behind a Function URL.
_NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


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


def _request_id(scope: Scope) -> str:
    lambda_context = scope.get("aws.context")
    return getattr(lambda_context, "aws_request_id", None) or uuid.uuid4().hex
