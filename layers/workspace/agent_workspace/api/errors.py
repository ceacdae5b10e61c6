"""Typed errors and malformed requests, as HTTP responses: problem JSON (RFC 9457).

Every error of the REST API is `application/problem+json`:
`{"type": "about:blank", "title": "<reason phrase>", "status": <code>, "detail": "<what and which field>"}`.
/mcp answers its own errors (`mcp_server.endpoint`) and keeps its shape.
"""

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from agent_workspace.api.access_log import loggable_path
from agent_workspace.domain.errors import WorkspaceError, field_path
from agent_workspace.domain.text import DETAIL_MAX, echo
from agent_workspace.observability import logger
from agent_workspace.web import problems
from agent_workspace.web.auth import error_headers
from agent_workspace.web.problems import PROBLEM_JSON

PROBLEM_MEDIA_TYPE = PROBLEM_JSON
_MCP_PATHS = ("/mcp", "/mcp/")


class Problem(BaseModel):
    """An error of the REST API (RFC 9457 problem details)."""

    type: str = Field("about:blank", description="Always 'about:blank': the status code says what kind of error.")
    title: str = Field(description="The HTTP reason phrase, e.g. 'Not Found'.")
    status: int = Field(description="The HTTP status code, repeated.")
    detail: str = Field(description="What went wrong, naming the field at fault where there is one.")


class ProblemResponse(JSONResponse):
    media_type = PROBLEM_MEDIA_TYPE


def problem(status: int, detail: str, headers: dict[str, str] | None = None) -> ProblemResponse:
    return ProblemResponse(problems.problem(status, detail), status_code=status, headers=headers)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` documenting these error statuses as problem JSON."""
    schema = Problem.model_json_schema()
    return {
        status: {"description": _reason(status), "content": {PROBLEM_MEDIA_TYPE: {"schema": schema}}}
        for status in statuses
    }


def install(app: FastAPI) -> None:
    @app.exception_handler(WorkspaceError)
    async def workspace_error(request: Request, error: WorkspaceError) -> JSONResponse:
        return problem(error.http_status, error.message, error_headers(request.app.state.runtime, request, error))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        return problem(422, "; ".join(_describe(detail) for detail in error.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        """Starlette's own errors: 404 for an unknown route, 405 for a method a route does not serve."""
        if error.status_code < 200 or error.status_code in (204, 304):  # no body allowed
            return Response(status_code=error.status_code, headers=error.headers)
        message = str(error.detail or "")
        if message in ("", _reason(error.status_code)):  # starlette's default: say what was asked for
            if error.status_code == 404:
                message = f"no route {echo(request.url.path)}"
            elif error.status_code == 405:
                message = f"{echo(request.method)} is not served at {echo(request.url.path)}"
            else:
                message = _reason(error.status_code)
        return problem(error.status_code, message, dict(error.headers or {}))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        logger.exception("request failed", extra={"path": echo(loggable_path(request.url.path))})
        if request.url.path in _MCP_PATHS:
            return JSONResponse({"error": "internal error; retry shortly"}, status_code=500)
        return problem(500, "internal error; retry shortly")


def _describe(detail: dict[str, Any]) -> str:
    """One validation error, naming the field: "missing required field 'title'", "unknown field 'x'", ...

    What the request sent is repeated capped (`echo`): a 4 MB field name comes back as its first characters."""
    kind, message = detail.get("type"), echo(detail.get("msg", "invalid"), DETAIL_MAX)
    if kind == "json_invalid":
        return "the request body is not valid JSON"
    loc = tuple(detail.get("loc", ()))
    if loc and loc[0] in ("body", "query", "path", "header", "cookie"):  # where it was sent, not a field
        loc = loc[1:]
    if not loc:  # the body as a whole; "field 'body'" would read as a field of that name
        return "missing request body: send a JSON object" if kind == "missing" else f"request body: {message}"
    where = echo(field_path(loc))
    if kind == "extra_forbidden":
        return f"unknown field '{where}'"
    if kind == "missing":
        return f"missing required field '{where}'"
    return f"field '{where}': {message}"


def _reason(status: int) -> str:
    try:
        return problems.reason(status)
    except ValueError:
        return "Error"
