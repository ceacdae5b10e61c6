"""Every HTML page the server sends may run only its own scripts.

The console keeps the human's token in its tab, on the server's origin: a script from anywhere else
(a CDN's, one injected into a page) running there could read it. So every `text/html` answer carries
a Content-Security-Policy that allows scripts, styles and connections from this origin only, unless
the route set a policy of its own. FastAPI's /docs and /redoc, which load Swagger UI and ReDoc from a
CDN, are not served (`agent_workspace.app`); the schema stays at /openapi.json.
"""

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Receive, Scope, Send

from agent_workspace.api.middleware import HttpMiddleware


def content_security_policy(*connect: str) -> str:
    """The policy, its connections allowed to this origin and to the origins in `connect` (the console's push
    socket, which on AWS is the WebSocket API's own host)."""
    sources = " ".join(("'self'", *connect))
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src {sources}; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )


CONTENT_SECURITY_POLICY = content_security_policy()


class HtmlPolicy(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if headers.get("content-type", "").lower().startswith("text/html"):
                    headers.setdefault("content-security-policy", CONTENT_SECURITY_POLICY)
                    headers.setdefault("x-content-type-options", "nosniff")
            await send(message)

        await self._app(scope, receive, send_with_policy)
