"""The composition root: the one ASGI app, served by uvicorn locally and by Mangum in Lambda.

It mounts the REST routers (`api/`) and the MCP endpoints (`mcp_server/`), so it stands above both; neither of them
imports the other."""

import threading
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from agent_workspace import __version__
from agent_workspace.api import errors
from agent_workspace.api.guard import HostOriginGuard
from agent_workspace.api.hangup import HangupWatch
from agent_workspace.api.html_policy import HtmlPolicy
from agent_workspace.api.response_limit import ResponseSizeLimit
from agent_workspace.mcp_server.endpoint import McpEndpoint, not_served
from agent_workspace.mcp_server.server import build_all, workspace_server
from agent_workspace.mcp_server.surfaces import SURFACES
from agent_workspace.runtime import Runtime


def rest_routers() -> list[APIRouter]:
    """The human REST API's routers, in the order they are matched and listed in the OpenAPI document."""
    from agent_workspace.api import (
        agents,
        board,
        board_tasks,
        bridge,
        channel,
        console,
        elicitations,
        events,
        human_tokens,
        memory,
        notifications,
        oauth_consent,
        pano,
        push,
        skills,
        tasks,
        workspaces,
    )

    return [
        workspaces.router,
        human_tokens.router,
        tasks.router,
        elicitations.router,
        memory.router,
        skills.router,
        events.router,
        pano.router,
        agents.router,
        channel.router,
        board.router,
        board_tasks.router,
        bridge.router,
        push.router,
        notifications.router,
        oauth_consent.router,
        console.router,
    ]


def sign_in_routes(runtime: Runtime, resource_paths: tuple[str, ...]) -> list[BaseRoute]:
    """Sign-in (OAuth 2.1, the MCP authorization spec): metadata, /authorize, /token, /register, /revoke."""
    from agent_workspace.api.oauth import OAuthServer

    return list(OAuthServer(runtime, resource_paths).routes())


class LazyRestApp(FastAPI):
    """The app, its REST routers included the first time something needs them: a request outside MCP (and its
    sign-in metadata), the OpenAPI document, a look at its routes; sign-in's routes, by any request outside MCP. An
    agent's MCP request with its token builds neither (the REST API's models and dependencies are a third of the cold
    import); a SnapStart snapshot includes both (`build_deferred` before the snapshot, functions/api/app.py), so a
    restored instance pays nothing for them."""

    rest_routers: Callable[[], list[APIRouter]] | None = None
    sign_in_routes: Callable[[], list[BaseRoute]] | None = None
    _rest_included = False
    _sign_in_included = False

    def build_deferred(self) -> None:
        """Everything built on first need, built now (before a SnapStart snapshot): sign-in and the REST routers, on
        the MCP side every tool, each path's listing and help, the resources' and skills' handlers; the task views."""
        self.include_rest()
        build_all()
        from agent_workspace.domain import tasks  # imported by the REST API and the tools by now

        tasks.build_views()

    def include_sign_in(self) -> None:
        if self._sign_in_included or self.sign_in_routes is None:
            return
        with _INCLUDING:
            if not self._sign_in_included:
                self.router.routes.extend(self.sign_in_routes())
                self._sign_in_included = True

    def include_rest(self) -> None:
        self.include_sign_in()  # first: sign-in's routes stand before the REST API's, as they always have
        if self._rest_included or self.rest_routers is None:
            return
        with _INCLUDING:
            if not self._rest_included:
                for router in self.rest_routers():
                    self.include_router(router)
                self._rest_included = True

    @property
    def routes(self) -> list[BaseRoute]:
        self.include_rest()
        return super().routes

    def openapi(self) -> dict[str, Any]:
        self.include_rest()
        return super().openapi()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._rest_included and scope["type"] == "http" and not scope["path"].startswith("/mcp"):
            if scope["path"].startswith(_SIGN_IN_METADATA):
                self.include_sign_in()
            else:
                self.include_rest()
        await super().__call__(scope, receive, send)


_INCLUDING = threading.Lock()
_SIGN_IN_METADATA = "/.well-known/"  # what an MCP client reads to sign in: served without the REST API


def create_app(runtime: Runtime) -> LazyRestApp:
    app = LazyRestApp(
        title="Agent Workspace",
        version=__version__,
        description="Human REST API of the workspace; agents use MCP at /mcp.",
        # FastAPI's /docs and /redoc load their scripts from a CDN, on the console's origin (`api.html_policy`).
        docs_url=None,
        redoc_url=None,
    )
    app.state.runtime = runtime
    errors.install(app)

    # Routed directly: `app.mount("/mcp", ...)` would answer POST /mcp with a 307 to /mcp/, and
    # a client that follows a 307 for a POST is rare; a trailing slash is served, not redirected, too.
    # Each reference's tools on a path of its own (`mcp_server.surfaces`); any other path under /mcp is not served.
    for surface in SURFACES:
        endpoint = McpEndpoint(workspace_server(surface), runtime)
        app.router.routes.append(Route(surface.path, endpoint, methods=None))
        app.router.routes.append(Route(f"{surface.path}/", endpoint, methods=None))
    app.router.routes.append(Route("/mcp/{rest:path}", not_served, methods=None))

    @app.get("/health", tags=["meta"])
    def health() -> dict:
        return {"status": "ok"}

    # Built by the first request outside /mcp (`LazyRestApp`), in this order, after the routes above.
    app.sign_in_routes = lambda: sign_in_routes(runtime, tuple(s.path for s in SURFACES))
    app.rest_routers = rest_routers
    # Outermost first: a policy on every HTML page, note a client's hang-up (a wait serving it stops), refuse
    # bad Hosts/Origins, then oversized bodies (413) before anything reads them; innermost, an answer too large
    # for Lambda's response limit becomes a problem instead of a 502.
    app.add_middleware(ResponseSizeLimit)
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=runtime.settings.max_request_bytes)
    app.add_middleware(HostOriginGuard, settings=runtime.settings)
    app.add_middleware(HangupWatch)
    app.add_middleware(HtmlPolicy)
    return app
