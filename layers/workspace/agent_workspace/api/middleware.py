"""The shape every middleware of the app shares: it acts on HTTP requests and passes anything else through.

Pure ASGI rather than Starlette's BaseHTTPMiddleware, which would buffer streaming responses and run the
app in another task (where a wait could not see its client hang up).
"""

from starlette.types import ASGIApp, Receive, Scope, Send


class HttpMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan and websocket: nothing here concerns them
            await self._app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The middleware's work for one HTTP request; it calls `self._app` itself."""
        raise NotImplementedError
