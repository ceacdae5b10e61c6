"""What the server sends a browser runs only the server's own scripts: no CDN, and a policy on every page."""

import re

import httpx
from fastapi.routing import iter_route_contexts
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from agent_workspace.api.html_policy import HtmlPolicy
from agent_workspace.app import create_app
from tests.support import PUSH_URL

CDN = re.compile(r"cdn\.|jsdelivr|unpkg|cdnjs|googleapis|<script[^>]+src=[\"']?(https?:)?//", re.IGNORECASE)


def directives(policy: str) -> dict[str, list[str]]:
    parsed = [part.split() for part in policy.split(";") if part.strip()]
    return {name.lower(): sources for name, *sources in parsed}


def assert_no_remote_scripts(url: str, response: httpx.Response) -> None:
    policy = response.headers.get("content-security-policy")
    assert policy, f"{url} is HTML without a Content-Security-Policy"
    rules = directives(policy)
    scripts = rules.get("script-src", rules.get("default-src"))
    assert scripts is not None and set(scripts) <= {"'self'", "'none'"}, f"{url}: {policy}"
    assert rules.get("default-src") == ["'none'"] and "'unsafe-inline'" not in policy, f"{url}: {policy}"


def test_the_api_docs_pages_that_load_a_cdn_are_gone_and_the_schema_stays(live):
    for path in ("/docs", "/docs/oauth2-redirect", "/redoc"):
        assert httpx.get(f"{live.url}{path}").status_code == 404, path
    schema = httpx.get(f"{live.url}/openapi.json")
    assert schema.status_code == 200 and schema.json()["info"]["title"] == "Agent Workspace"


def test_no_page_or_asset_references_a_cdn_and_every_html_page_forbids_remote_scripts(live, runtime, seeded):
    """Every GET route without path parameters, and the console's files, as a browser (with the human's token)."""
    routes = iter_route_contexts(create_app(runtime).routes)  # included routers' routes, with their full paths
    paths = {route.path for route in routes if "GET" in (route.methods or set())}
    paths = {path for path in paths if "{" not in path} | {"/console/app.js", "/console/style.css", "/docs"}
    human = {"authorization": f"Bearer {seeded.human_token}"}
    html = 0
    for path in sorted(paths):
        response = httpx.get(f"{live.url}{path}", headers=human, params={"wait": 0})  # the bridge poll: at once
        assert not CDN.search(response.text), f"{path} references a CDN"
        if response.headers.get("content-type", "").startswith("text/html"):
            html += 1
            assert_no_remote_scripts(path, response)
    assert html >= 1  # the console's page at least


def test_an_html_answer_that_sets_no_policy_gets_the_servers():
    """A page a future route serves without thinking of it is covered too; one with its own policy keeps it."""

    def bare(request):
        return HTMLResponse("<p>hi</p>")

    def own(request):
        return HTMLResponse("<p>hi</p>", headers={"content-security-policy": "default-src 'none'"})

    client = TestClient(HtmlPolicy(Starlette(routes=[Route("/bare", bare), Route("/own", own)])))

    bare_page, own_page = client.get("/bare"), client.get("/own")
    assert_no_remote_scripts("/bare", bare_page)
    assert bare_page.headers["x-content-type-options"] == "nosniff"
    assert own_page.headers["content-security-policy"] == "default-src 'none'"


def test_the_console_may_open_its_push_socket_and_connect_nowhere_else(runtime, live):
    """With push on, the WebSocket API's origin joins `connect-src` (on AWS another host than the API's); nothing
    else does, and without push the page connects to its own origin only."""
    assert directives(httpx.get(f"{live.url}/").headers["content-security-policy"])["connect-src"] == ["'self'"]

    runtime.settings = runtime.settings.model_copy(update={"push_url": PUSH_URL})
    response = httpx.get(f"{live.url}/")

    assert_no_remote_scripts("/", response)
    rules = directives(response.headers["content-security-policy"])
    assert rules["connect-src"] == ["'self'", "wss://k3x9p2m7qa.execute-api.us-east-1.amazonaws.com"]
    assert rules["script-src"] == ["'self'"]
