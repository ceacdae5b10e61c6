"""The composition root: the one ASGI app, served by uvicorn locally and by Mangum in Lambda.

It mounts the REST routers (`api/`) and the MCP endpoints (`mcp_server/`), so it stands above both; neither of them
imports the other."""

from fastapi import FastAPI
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.routing import Route

from agent_workspace import __version__
from agent_workspace.api import (
    agents,
    board,
    board_tasks,
    bridge,
    channel,
    console,
    elicitations,
    errors,
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
from agent_workspace.api.guard import HostOriginGuard
from agent_workspace.api.hangup import HangupWatch
from agent_workspace.api.html_policy import HtmlPolicy
from agent_workspace.api.oauth import OAuthServer
from agent_workspace.api.response_limit import ResponseSizeLimit
from agent_workspace.mcp_server.endpoint import McpEndpoint, not_served
from agent_workspace.mcp_server.server import workspace_server
from agent_workspace.mcp_server.surfaces import SURFACES
from agent_workspace.runtime import Runtime


def create_app(runtime: Runtime) -> FastAPI:
    app = FastAPI(
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

    # Sign-in (OAuth 2.1, the MCP authorization spec): metadata, /authorize, /token, /register, /revoke.
    app.router.routes.extend(OAuthServer(runtime, tuple(s.path for s in SURFACES)).routes())

    app.include_router(workspaces.router)
    app.include_router(human_tokens.router)
    app.include_router(tasks.router)
    app.include_router(elicitations.router)
    app.include_router(memory.router)
    app.include_router(skills.router)
    app.include_router(events.router)
    app.include_router(pano.router)
    app.include_router(agents.router)
    app.include_router(channel.router)
    app.include_router(board.router)
    app.include_router(board_tasks.router)
    app.include_router(bridge.router)
    app.include_router(push.router)
    app.include_router(notifications.router)
    app.include_router(oauth_consent.router)
    app.include_router(console.router)
    # Outermost first: a policy on every HTML page, note a client's hang-up (a wait serving it stops), refuse
    # bad Hosts/Origins, then oversized bodies (413) before anything reads them; innermost, an answer too large
    # for Lambda's response limit becomes a problem instead of a 502.
    app.add_middleware(ResponseSizeLimit)
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=runtime.settings.max_request_bytes)
    app.add_middleware(HostOriginGuard, settings=runtime.settings)
    app.add_middleware(HangupWatch)
    app.add_middleware(HtmlPolicy)
    return app
