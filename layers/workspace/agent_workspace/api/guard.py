"""Host and Origin checks for every request (MCP spec: servers must validate Origin).

A request whose Origin header is present and not allowed gets 403: a web page can reach the
server only from an origin the operator listed, or from the server's own origin. Where the Host
itself can be chosen by an attacker (DNS rebinding on a loopback server), `allowed_hosts` pins it
first, so "the server's own origin" cannot be spoofed.

A browser extension's origin (`chrome-extension://<id>`) may call the REST API (`/api/`), not MCP: only an
installed extension sends it, never a web page, and it still needs a bearer token (the server sets no cookies).
So the human's extension works whatever id its install got, without listing it in `allowed_origins`.
"""

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_workspace.config import Settings
from agent_workspace.web.auth import CROSS_ORIGIN_PATHS, METADATA_PATH
from agent_workspace.web.problems import send_problem

_EXTENSION_SCHEME = "chrome-extension://"


class HostOriginGuard:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self._app = app
        self._hosts = {h.lower() for h in settings.allowed_hosts}
        self._origins = {o.lower() for o in settings.allowed_origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            host = headers.get("host", "").lower()
            if self._hosts and host not in self._hosts:
                await send_problem(send, 421, f"host {host!r} is not served here")
                return
            origin = headers.get("origin")
            if origin is not None and not self._origin_allowed(origin.lower().rstrip("/"), host, scope):
                await send_problem(send, 403, "origin not allowed")
                return
        await self._app(scope, receive, send)

    def _origin_allowed(self, origin: str, host: str, scope: Scope) -> bool:
        if origin in self._origins:
            return True
        if origin.startswith(_EXTENSION_SCHEME) and scope.get("path", "").startswith("/api/"):
            return True
        path = scope.get("path", "")
        if path in CROSS_ORIGIN_PATHS or path.startswith(f"{METADATA_PATH}/"):
            return True  # OAuth's token, registration, revocation and metadata: no cookie, any client's origin
        scheme = Headers(scope=scope).get("x-forwarded-proto", scope.get("scheme", "http"))
        return bool(host) and origin == f"{scheme}://{host}"
