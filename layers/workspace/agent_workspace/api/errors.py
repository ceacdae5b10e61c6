"""Typed errors and malformed requests, as HTTP responses: `{"error": "<what and which field>"}`."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from agent_workspace.api.auth import www_authenticate
from agent_workspace.domain.errors import Unauthorized, Unavailable, WorkspaceError
from agent_workspace.mcp_server.dispatch import field_path
from agent_workspace.observability import logger


def install(app: FastAPI) -> None:
    @app.exception_handler(WorkspaceError)
    async def workspace_error(request: Request, error: WorkspaceError) -> JSONResponse:
        headers = {}
        if isinstance(error, Unauthorized):
            headers["WWW-Authenticate"] = www_authenticate(request.app.state.runtime, request)
        if isinstance(error, Unavailable):
            headers["Retry-After"] = "2"
        return JSONResponse({"error": error.message}, status_code=error.http_status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = []
        for detail in error.errors():
            loc = tuple(part for part in detail.get("loc", ()) if part not in ("body", "query", "path"))
            where = field_path(loc) if loc else "body"
            if detail.get("type") == "extra_forbidden":
                problems.append(f"unknown field '{where}'")
            elif detail.get("type") == "missing":
                problems.append(f"missing required field '{where}'")
            else:
                problems.append(f"field '{where}': {detail.get('msg', 'invalid')}")
        return JSONResponse({"error": "; ".join(problems)}, status_code=422)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        logger.exception("request failed", extra={"path": request.url.path})
        return JSONResponse({"error": "internal error; retry shortly"}, status_code=500)
