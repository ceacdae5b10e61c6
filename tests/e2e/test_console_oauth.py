"""An app's OAuth sign-in in Chromium: the consent page /authorize leads to, and the console's Connected apps.

The app is played over plain HTTP (registration, /authorize, /token) the way an MCP client does it. Its
redirect URI is a loopback address no one listens on: Playwright answers it, so the test reads what the
consent page sent the browser back with.
"""

import base64
import hashlib
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import Page, expect

from tests.support import bearer, loopback_page

WAIT_MS = 15_000  # bounded waits for what the console shows after polling (every ~3 s)
REDIRECT = "http://127.0.0.1:9/cb"
BACK_IN_THE_APP = re.compile(r"^http://127\.0\.0\.1:9/cb\?")
LOOPBACK_HOST = re.compile(r"^127\.0\.0\.1(:9)?$")  # the redirect URI's host, as the page names it


@dataclass
class Request:
    """A pending authorization request, as the app left it: where the human was sent, and the PKCE verifier."""

    client_id: str
    consent_url: str
    verifier: str


def registered(live, name: str = "Test client") -> str:
    """A client registered the dynamic way (RFC 7591), as Claude Code and Cursor do it: its client_id."""
    body = {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": name}
    response = httpx.post(f"{live.url}/register", json=body)
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorize(live, client_id: str, scope: str = "read write") -> Request:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "xyz",
        "scope": scope,
    }
    response = httpx.get(f"{live.url}/authorize", params=params, follow_redirects=False)
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(f"{live.url}/oauth/consent?request="), location
    return Request(client_id, location, verifier)


def app_answers(page: Page) -> None:
    """The app's redirect URI, answered in the browser by a tiny page of its own."""
    page.route(
        "http://127.0.0.1:9/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<p>Back in the app.</p>"),
    )


def returned(page: Page) -> dict[str, list[str]]:
    """What the consent page sent the browser back to the app with: the redirect URI's query."""
    expect(page).to_have_url(BACK_IN_THE_APP, timeout=WAIT_MS)
    return parse_qs(urlsplit(page.url).query)


@contextmanager
def serving(html: str) -> Iterator[str]:
    """A page of another origin on a loopback port of its own; its URL.

    A real server rather than `page.route`: Chromium's local-network checks refuse a frame of the live server in a
    page Playwright made up, before its policy would be tested."""
    with loopback_page(html.encode()) as base:
        yield f"{base}/"


def sign_in(page: Page, request: Request, token: str) -> None:
    page.goto(request.consent_url)
    page.get_by_label("Human token", exact=True).fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Connect "))).to_be_visible()


def workspace_made(live, seeded, title: str) -> str:
    body = {"title": title, "mission": "A second one."}
    response = httpx.post(f"{live.url}/api/workspaces", json=body, headers=bearer(seeded.human_token))
    assert response.status_code == 201, response.text
    return response.json()["id"]


def connected_apps(live, seeded, workspace_id: str) -> list[dict]:
    url = f"{live.url}/api/workspaces/{workspace_id}/connected-apps"
    response = httpx.get(url, headers=bearer(seeded.human_token))
    assert response.status_code == 200, response.text
    return response.json()["items"]


# -- the consent page -------------------------------------------------------------------------------


def test_a_signed_out_human_gets_the_consoles_sign_in_and_a_refused_token_keeps_them_there(live, seeded, console):
    page = console
    request = authorize(live, registered(live))
    page.goto(request.consent_url)

    expect(page.get_by_label("Human token", exact=True)).to_have_attribute("type", "password")
    page.get_by_label("Human token", exact=True).fill("aw_human_not-a-token")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("alert")).to_contain_text("the token was refused")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()
    expect(page.get_by_role("button", name="Allow")).to_be_hidden()
    assert page.evaluate("sessionStorage.getItem('agentWorkspace.humanToken')") is None

    page.get_by_label("Human token", exact=True).fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Connect Test client?")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text("")
    assert page.evaluate("sessionStorage.getItem('agentWorkspace.humanToken')") == seeded.human_token


def test_the_page_names_the_app_its_host_and_scopes_and_offers_the_accounts_workspaces(live, seeded, console):
    page = console
    second = workspace_made(live, seeded, "Second workspace")
    request = authorize(live, registered(live), scope="read write")
    sign_in(page, request, seeded.human_token)

    expect(page.get_by_text(LOOPBACK_HOST)).to_be_visible()
    expect(page.get_by_text("acts as an agent of one workspace")).to_be_visible()
    scopes = page.get_by_role("list", name="It asks to")
    expect(scopes.get_by_role("listitem")).to_have_text(
        ["read: read tasks, memory, skills, the board and agents", "write: create and change them"]
    )
    options = page.get_by_label("Workspace", exact=True).locator("option")
    expect(options).to_have_count(2)
    offered = {o.text_content(): o.get_attribute("value") for o in options.all()}
    assert offered == {"Local workspace": seeded.workspace_id, "Second workspace": second}
    expect(page.get_by_role("button", name="Allow")).to_be_enabled()
    expect(page.get_by_role("button", name="Deny")).to_be_enabled()


def test_a_dynamically_registered_app_is_marked_unverified_with_why(live, seeded, console):
    page = console
    sign_in(page, authorize(live, registered(live, "Totally Claude")), seeded.human_token)

    mark = page.get_by_text("unverified", exact=True)
    expect(mark).to_be_visible()
    expect(mark).to_have_attribute("title", re.compile(r"nothing proves"))


def test_deny_sends_the_browser_back_with_access_denied_and_the_state(live, seeded, console):
    page = console
    app_answers(page)
    sign_in(page, authorize(live, registered(live)), seeded.human_token)

    page.get_by_role("button", name="Deny").click()

    query = returned(page)
    assert query["error"] == ["access_denied"] and query["state"] == ["xyz"]
    assert "code" not in query


def test_allow_sends_a_code_the_state_and_the_issuer_and_the_app_shows_under_connected_apps(live, seeded, console):
    page = console
    app_answers(page)
    second = workspace_made(live, seeded, "Second workspace")
    request = authorize(live, registered(live))
    sign_in(page, request, seeded.human_token)

    page.get_by_label("Workspace", exact=True).select_option(label="Second workspace")
    page.get_by_role("button", name="Allow").click()

    query = returned(page)
    issuer = httpx.get(f"{live.url}/.well-known/oauth-authorization-server").json()["issuer"]
    assert query["state"] == ["xyz"] and query["iss"] == [issuer] and query["code"][0]
    tokens = httpx.post(
        f"{live.url}/token",
        data={
            "grant_type": "authorization_code",
            "code": query["code"][0],
            "redirect_uri": REDIRECT,
            "client_id": request.client_id,
            "code_verifier": request.verifier,
        },
    )
    assert tokens.status_code == 200, tokens.text
    assert connected_apps(live, seeded, seeded.workspace_id) == []  # the other workspace has none

    page.goto(f"{live.url}/#/settings/apps")  # the same tab: signed in to the console with the same token
    page.get_by_role("combobox", name="Workspace", exact=True).select_option(second)
    apps = page.get_by_role("list", name="Connected apps")
    app = apps.get_by_role("listitem").filter(has_text="Test client")
    expect(app).to_be_visible(timeout=WAIT_MS)
    expect(app.get_by_text("unverified", exact=True)).to_be_visible()
    expect(app).to_contain_text(re.compile(r"127\.0\.0\.1(:9)? · read, write"))
    expect(app).to_contain_text(re.compile(r"Connected \S.* · last used "))

    app.get_by_role("button", name="Revoke Test client").click()
    page.get_by_role("button", name="Revoke app").click()

    expect(page.get_by_text("No app has signed in to this workspace.")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Test client is revoked")
    assert connected_apps(live, seeded, second) == []
    rounds = int(page.locator("body").get_attribute("data-rounds") or 0)
    page.wait_for_function("n => Number(document.body.dataset.rounds) > n", arg=rounds, timeout=WAIT_MS)
    expect(apps.get_by_role("listitem")).to_have_count(0)  # the round after the revocation keeps it gone


def test_revoking_asks_first_and_cancel_keeps_the_app(live, seeded, console):
    page = console
    app_answers(page)
    request = authorize(live, registered(live))
    sign_in(page, request, seeded.human_token)
    page.get_by_role("button", name="Allow").click()
    code = returned(page)["code"][0]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": request.client_id,
        "code_verifier": request.verifier,
    }
    assert httpx.post(f"{live.url}/token", data=form).status_code == 200

    page.goto(f"{live.url}/#/settings/apps")
    app = page.get_by_role("list", name="Connected apps").get_by_role("listitem").filter(has_text="Test client")
    app.get_by_role("button", name="Revoke Test client").click(timeout=WAIT_MS)
    expect(page.get_by_role("group", name=re.compile(r"^Revoke Test client\?"))).to_be_visible()
    page.get_by_role("button", name="Cancel").click()

    expect(page.get_by_role("button", name="Revoke app")).to_be_hidden()
    expect(app.get_by_role("button", name="Revoke Test client")).to_be_focused()
    assert [a["clientName"] for a in connected_apps(live, seeded, seeded.workspace_id)] == ["Test client"]


def test_a_request_answered_in_another_tab_shows_the_servers_reason_and_stays(live, seeded, console):
    page = console
    app_answers(page)
    request = authorize(live, registered(live))
    sign_in(page, request, seeded.human_token)
    other = page.context.new_page()
    app_answers(other)
    sign_in(other, request, seeded.human_token)

    other.get_by_role("button", name="Deny").click()
    returned(other)
    page.get_by_role("button", name="Allow").click()

    expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Allowing the app failed: \S"))
    expect(page).to_have_url(re.compile(r"/oauth/consent\?request="))
    expect(page.get_by_role("button", name="Allow")).to_be_enabled()


def test_an_unknown_or_missing_request_is_said_plainly(live, seeded, console):
    page = console
    page.goto(f"{live.url}/oauth/consent")
    expect(page.get_by_role("heading", name="No sign-in to answer")).to_be_visible()
    expect(page.get_by_text("the address names none")).to_be_visible()
    expect(page.get_by_label("Human token", exact=True)).to_be_hidden()

    page.goto(f"{live.url}/oauth/consent?request=no-such-request")
    page.get_by_label("Human token", exact=True).fill(seeded.human_token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("unknown, expired or already answered")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("Reading the sign-in request failed")


# -- what the server sends with the page -----------------------------------------------------------


def test_the_consent_page_refuses_framing_and_caching_and_sends_no_referrer(live):
    response = httpx.get(f"{live.url}/oauth/consent", params={"request": "x"})

    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    policy = {
        name: sources
        for name, *sources in (part.split() for part in response.headers["content-security-policy"].split(";"))
    }
    assert policy["frame-ancestors"] == ["'none'"] and policy["script-src"] == ["'self'"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"


def test_a_page_elsewhere_cannot_frame_the_consent_page(live, page):
    """A clickjacking page: Chromium refuses to show the consent page inside it (and logs why, hence `page`)."""
    request = authorize(live, registered(live))
    framing = f'<iframe id="f" src="{request.consent_url}" width="600" height="400"></iframe>'

    with (
        serving(framing) as elsewhere,
        page.expect_console_message(lambda message: "frame-ancestors" in message.text, timeout=WAIT_MS),
    ):
        page.goto(elsewhere)

    assert [frame.url for frame in page.frames if frame.url.startswith(live.url)] == []


def test_no_page_of_the_sign_in_logs_a_csp_violation(live, seeded, console):
    """The consent page and the console with its Connected apps, in every state they show (`console` fails on any)."""
    page = console
    app_answers(page)
    page.goto(f"{live.url}/oauth/consent")
    expect(page.get_by_role("heading", name="No sign-in to answer")).to_be_visible()
    request = authorize(live, registered(live))
    sign_in(page, request, seeded.human_token)
    page.get_by_role("button", name="Allow").click()
    returned(page)
    page.goto(f"{live.url}/#/settings/apps")
    expect(page.get_by_role("heading", name="Connected apps")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("body")).to_have_attribute("data-rounds", re.compile(r"^[1-9]"), timeout=WAIT_MS)
