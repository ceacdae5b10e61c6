"""Issue 33's "done when": the MCP Python SDK's own OAuth client signs in, the human consenting in Chromium.

`OAuthClientProvider` finds the server from a bare 401 (resource and authorization server metadata), registers itself
(RFC 7591), and hands its /authorize address to our `redirect_handler`; the browser opens it, the human signs in on
the consent page, picks a workspace and answers; the browser lands on the app's redirect URI, and our
`callback_handler` hands what it brought (code, state, iss) back to the SDK, which exchanges the code and retries.

Threads: Playwright's sync API keeps an event loop running in the test's thread (the module-scoped `chromium`), so
the async SDK client cannot run there. As in test_console.py, the tests are plain sync tests that drive the page, and
the SDK client runs with `anyio.run` in a thread of its own; the two meet through queues: the authorization URL one
way, the address the browser came back with the other.
"""

import queue
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from playwright.sync_api import Page, Route, expect

from agent_workspace.services import accounts
from tests.e2e.console_page import Background
from tests.support import TOOL_NAMES, Agent, bearer, connected, loopback_page

WAIT_S = 30  # bounded waits for the other thread: the SDK's discovery and registration, the human's answer
CLAUDE_AI = "https://claude.ai/api/mcp/auth_callback"
CHOSEN, OTHER = "Local workspace", "Elsewhere"  # the seeded workspace's title, and a second one's


class InMemoryTokenStorage:
    """The SDK's `TokenStorage`: what a client keeps between runs (its registration, its tokens), kept in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


# -- the app's side of the redirect -------------------------------------------------------------------


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


@dataclass
class Landing:
    """The app's redirect URI, and every address the browser came back to it with."""

    redirect_uri: str
    seen: list[str] = field(default_factory=list)
    _arrivals: "queue.Queue[str]" = field(default_factory=queue.Queue)

    def arrived(self, url: str) -> None:
        self.seen.append(url)
        self._arrivals.put(url)

    def next_arrival(self) -> str:
        return self._arrivals.get(timeout=WAIT_S)


@contextmanager
def loopback_landing() -> Iterator[Landing]:
    """A native app's redirect (RFC 8252): a one-route HTTP server on a free loopback port, as a CLI client runs."""

    landing = Landing("")
    body = b"<!doctype html><title>Signed in</title><p>You can close this tab.</p>"
    with loopback_page(body, "/callback", landing.arrived) as base:
        landing.redirect_uri = f"{base}/callback"
        yield landing


@contextmanager
def claude_ai_landing(page: Page) -> Iterator[Landing]:
    """claude.ai's redirect, answered inside the browser: nothing leaves the machine."""
    landing = Landing(CLAUDE_AI)

    def answer(route: Route) -> None:
        landing.arrived(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>Back in claude.ai.</p>")

    page.route("https://claude.ai/**", answer)
    try:
        yield landing
    finally:
        page.unroute("https://claude.ai/**")


@contextmanager
def landing_for(kind: str, page: Page) -> Iterator[Landing]:
    with loopback_landing() if kind == "loopback" else claude_ai_landing(page) as landing:
        yield landing


# -- the SDK client, in its own thread ----------------------------------------------------------------


class Refused(Exception):
    """The redirect brought no code (`error=access_denied`): the app's callback stops the SDK's flow."""


def sdk_client(url: str, landing: Landing, steps: Callable[[Client], Any]) -> tuple[Background, "queue.Queue[str]"]:
    """The SDK's OAuth client connecting to `url` in a thread, then running `await steps(client)`: (the thread, where
    its authorization URL appears for the browser to open)."""
    to_browser: queue.Queue[str] = queue.Queue()
    metadata = OAuthClientMetadata(
        redirect_uris=[landing.redirect_uri],
        token_endpoint_auth_method="none",
        client_name="SDK test client",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )

    async def redirect_handler(authorization_url: str) -> None:
        to_browser.put(authorization_url)

    async def callback_handler() -> AuthorizationCodeResult:
        query = query_of(await anyio.to_thread.run_sync(landing.next_arrival))
        if "code" not in query:
            raise Refused(query)  # as a CLI would stop: the SDK's callback has no way to return a refusal
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def main() -> Any:
        provider = OAuthClientProvider(
            f"{url}/mcp", metadata, InMemoryTokenStorage(), redirect_handler, callback_handler
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=WAIT_S) as http,
            Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
        ):
            return await steps(client)

    return Background(lambda: anyio.run(main)), to_browser


def handed_over(client: Background, to_browser: "queue.Queue[str]") -> str:
    """The authorization URL the SDK client handed its redirect handler; or, if it never did, why."""
    try:
        return to_browser.get(timeout=WAIT_S)
    except queue.Empty:
        client.result(timeout=1)  # raises what stopped the client before its redirect
        raise AssertionError("the SDK client connected without asking anyone to sign in") from None


# -- the human, in Chromium -------------------------------------------------------------------------------


def consent(page: Page, authorization_url: str, human_token: str, decision: str, workspace: str = CHOSEN) -> None:
    """Open the app's authorization URL in a tab holding no sign-in, sign in, and answer for `workspace`."""
    page.goto(authorization_url)
    expect(page).to_have_url(re.compile(r"/oauth/consent\?request="))
    page.get_by_label("Human token", exact=True).fill(human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("SDK test client").first).to_be_visible()
    if decision == "Allow":
        page.get_by_label("Workspace", exact=True).select_option(label=workspace)
    page.get_by_role("button", name=decision, exact=True).click()


def back_in_the_app(page: Page, landing: Landing) -> None:
    expect(page).to_have_url(re.compile("^" + re.escape(landing.redirect_uri) + r"\?"))


# -- the tests ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["loopback", "claude.ai"])
def test_the_sdks_oauth_client_signs_in_through_chromium_and_works_in_the_chosen_workspace_only(
    live, runtime, seeded, page, kind
):
    other, other_token = accounts.create_workspace(runtime.accounts, seeded.account_id, OTHER, "")

    async def hidden_task() -> str:
        async with connected(live.url, other_token.token) as elsewhere:
            return await elsewhere.create(title="Only in the other workspace", body="b")

    hidden = Background(lambda: anyio.run(hidden_task)).result(timeout=WAIT_S)  # not in this thread: see above

    async def steps(client: Client) -> dict[str, Any]:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        app = Agent(client)
        made = await app.create(title="Made by the SDK client", body="b")
        listed, is_error = await app("task", "list")
        assert not is_error, listed
        return {"tools": tools, "made": made, "listed": listed}

    with landing_for(kind, page) as landing:
        client, to_browser = sdk_client(live.url, landing, steps)
        consent(page, handed_over(client, to_browser), seeded.human_token, "Allow")
        back_in_the_app(page, landing)
        seen = client.result(timeout=WAIT_S)

    [arrival] = landing.seen  # what the SDK checked (state, and iss against the issuer it discovered) and exchanged
    assert query_of(arrival)["iss"] == live.url and query_of(arrival)["code"]
    assert seen["tools"] == TOOL_NAMES
    assert seen["made"] in seen["listed"] and hidden not in seen["listed"]
    human = bearer(seeded.human_token)
    here = httpx.get(f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks/{seen['made']}", headers=human)
    assert here.status_code == 200 and here.json()["title"] == "Made by the SDK client"
    there = httpx.get(f"{live.url}/api/workspaces/{other.id}/tasks/{seen['made']}", headers=human)
    assert there.status_code == 404
    apps = httpx.get(f"{live.url}/api/workspaces/{seeded.workspace_id}/connected-apps", headers=human).json()
    assert [app["clientName"] for app in apps["items"]] == ["SDK test client"]
    assert httpx.get(f"{live.url}/api/workspaces/{other.id}/connected-apps", headers=human).json()["items"] == []


def test_deny_in_chromium_sends_the_sdk_client_access_denied_with_its_state_and_no_code(live, seeded, page):
    async def steps(client: Client) -> None:
        raise AssertionError("a denied client got connected")

    with loopback_landing() as landing:
        client, to_browser = sdk_client(live.url, landing, steps)
        authorization_url = handed_over(client, to_browser)
        consent(page, authorization_url, seeded.human_token, "Deny")
        back_in_the_app(page, landing)
        with pytest.raises(ExceptionGroup) as raised:  # the SDK's task group carries the callback's error out
            client.result(timeout=WAIT_S)

    assert raised.group_contains(Refused, depth=None)
    [arrival] = landing.seen
    query = query_of(arrival)
    assert query["error"] == "access_denied" and "code" not in query
    assert query["state"] == query_of(authorization_url)["state"] and query["iss"] == live.url
