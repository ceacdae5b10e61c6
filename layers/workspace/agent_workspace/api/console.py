"""Serves the web console: `/` is its page, `/oauth/consent` the page where the human answers an app's
sign-in (OAuth), `/console/...` their scripts and styles, all from the package.

Nothing is fetched from elsewhere, and the Content-Security-Policy says so: the page may only load
its own files and talk to this server's API (and its push socket); the human's token stays in the tab's
sessionStorage.
"""

from pathlib import Path
from urllib.parse import urlsplit

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from agent_workspace.api.deps import RuntimeDep
from agent_workspace.api.html_policy import CONTENT_SECURITY_POLICY, content_security_policy

STATIC = Path(__file__).resolve().parent.parent / "console" / "static"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",  # revalidated on every load: a deploy shows at once
}
# The consent page's address names a pending sign-in request: kept in no cache, sent as no Referer.
_CONSENT_HEADERS = {**_HEADERS, "Cache-Control": "no-store"}

router = APIRouter(include_in_schema=False)


@router.get("/")
def page(rt: RuntimeDep) -> FileResponse:
    """The console; with push on, its policy lets it open the push socket (wss://, the WebSocket API's host)."""
    push_url = rt.settings.push_url
    if not push_url:
        return _file("index.html")
    parts = urlsplit(push_url)
    policy = content_security_policy(f"{parts.scheme}://{parts.netloc}")
    return _file("index.html", {**_HEADERS, "Content-Security-Policy": policy})


@router.get("/oauth/consent")
def consent_page() -> FileResponse:
    """Where /authorize sends the human: it reads `?request=<id>` and answers it over /api/oauth/requests."""
    return _file("consent.html", _CONSENT_HEADERS)


@router.get("/sw.js")
def service_worker() -> FileResponse:
    """The console's service worker (Web Push), from the root: a worker's scope is the path it is served at."""
    return _file("sw.js")


@router.get("/console/{name:path}")
def asset(name: str) -> FileResponse:
    """The console's modules and styles: `app.js`, `core/api.js`, `views/agents/prompt.js`, `css/base.css`."""
    return _file(name)


_DEPTH = 3  # static/views/agents/x.js: the deepest a shipped file sits


def _file(name: str, headers: dict[str, str] = _HEADERS) -> FileResponse:
    parts = name.split("/")
    # Only the files shipped in static/, by plain names: no empty, dot-led (hidden, "..") or too many segments.
    if len(parts) > _DEPTH or any(not part or part.startswith(".") or "\\" in part for part in parts):
        raise HTTPException(status_code=404)
    path = STATIC.joinpath(*parts)
    if path.suffix not in _TYPES or not path.is_file():
        raise HTTPException(status_code=404)
    return FileResponse(path, media_type=_TYPES[path.suffix], headers=headers)
