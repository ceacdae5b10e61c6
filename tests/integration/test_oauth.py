"""OAuth 2.1 sign-in over real HTTP: discovery, registration, consent, codes, tokens, scopes and revocation.

Issue 33 and the MCP authorization spec: an app that cannot send a pasted header signs in as an agent of one
workspace the human picks, and gets exactly that workspace's agent tools.
"""

import base64
import hashlib
import json
import secrets
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from agent_workspace.domain import oauth
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.services import accounts
from agent_workspace.services.client_metadata import ClientMetadataError
from agent_workspace.store import keys
from tests.support import bearer, connected

LOOPBACK = "http://127.0.0.1:8765/callback"
CLAUDE_AI = "https://claude.ai/api/mcp/auth_callback"


class Pkce:
    def __init__(self) -> None:
        self.verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(self.verifier.encode()).digest()
        self.challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")


def register(url: str, *redirects: str, **extra) -> httpx.Response:
    body = {"redirect_uris": list(redirects or [LOOPBACK]), "token_endpoint_auth_method": "none", "client_name": "CLI"}
    return httpx.post(f"{url}/register", json=body | extra)


def client_id(url: str, *redirects: str, **extra) -> str:
    response = register(url, *redirects, **extra)
    assert response.status_code == 201, response.text
    return response.json()["client_id"]


def authorize(url: str, client: str, pkce: Pkce, redirect: str = LOOPBACK, **params) -> httpx.Response:
    query = {
        "response_type": "code",
        "client_id": client,
        "redirect_uri": redirect,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "scope": "read write",
        "resource": f"{url}/mcp",
    } | params
    return httpx.get(f"{url}/authorize", params={k: v for k, v in query.items() if v is not None})


def request_id(response: httpx.Response) -> str:
    assert response.status_code == 302, response.text
    location = urlsplit(response.headers["location"])
    assert location.path == "/oauth/consent", location
    return parse_qs(location.query)["request"][0]


def decide(url: str, human: str, request: str, decision: str = "allow", workspace: str | None = None) -> httpx.Response:
    body = {"decision": decision} | ({"workspaceId": workspace} if workspace else {})
    return httpx.post(f"{url}/api/oauth/requests/{request}", json=body, headers=bearer(human))


def answer(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 200, response.text
    return {k: v[0] for k, v in parse_qs(urlsplit(response.json()["redirectTo"]).query).items()}


def exchange(url: str, client: str, code: str, pkce: Pkce, redirect: str = LOOPBACK, **extra) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect,
        "client_id": client,
        "code_verifier": pkce.verifier,
    }
    return httpx.post(f"{url}/token", data=form | extra)


def refresh(url: str, client: str, token: str) -> httpx.Response:
    return httpx.post(f"{url}/token", data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client})


def signed_in(url: str, seeded, scope: str = "read write", redirect: str = LOOPBACK) -> tuple[str, dict]:
    """A client signed in to the seeded workspace: (client id, the token response)."""
    client, pkce = client_id(url, redirect), Pkce()
    request = request_id(authorize(url, client, pkce, redirect, scope=scope))
    code = answer(decide(url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]
    response = exchange(url, client, code, pkce, redirect)
    assert response.status_code == 200, response.text
    return client, response.json()


def mcp_status(url: str, token: str) -> int:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = bearer(token) | {"Accept": "application/json, text/event-stream"}
    return httpx.post(f"{url}/mcp", json=body, headers=headers).status_code


# -- discovery ------------------------------------------------------------------------------------------------


def test_an_unauthenticated_mcp_request_points_to_the_resource_metadata_which_names_this_server(live):
    response = httpx.post(f"{live.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and 'resource_metadata="' in challenge
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    for address in (metadata_url, f"{live.url}/.well-known/oauth-protected-resource/mcp"):
        metadata = httpx.get(address).json()
        assert metadata["resource"] == f"{live.url}/mcp"
        assert metadata["authorization_servers"] == [live.url]
        assert metadata["scopes_supported"] == ["read", "write", "manage"]


def test_authorization_server_metadata_offers_code_with_s256_public_clients_documents_and_iss(live):
    metadata = httpx.get(f"{live.url}/.well-known/oauth-authorization-server").json()
    assert metadata["issuer"] == live.url
    for name, path in [
        ("authorization_endpoint", "/authorize"),
        ("token_endpoint", "/token"),
        ("registration_endpoint", "/register"),
        ("revocation_endpoint", "/revoke"),
    ]:
        assert metadata[name] == f"{live.url}{path}"
    assert metadata["response_types_supported"] == ["code"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert "none" in metadata["token_endpoint_auth_methods_supported"]
    assert metadata["client_id_metadata_document_supported"] is True
    assert metadata["authorization_response_iss_parameter_supported"] is True


def test_the_issuer_is_the_configured_public_url_behind_a_function_url(runtime):
    from fastapi.testclient import TestClient

    from agent_workspace.app import create_app

    runtime.settings = runtime.settings.model_copy(update={"public_url": "https://abc.lambda-url.eu-west-1.on.aws/"})
    with TestClient(create_app(runtime)) as client:
        server = client.get("/.well-known/oauth-authorization-server").json()
        resource = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert server["issuer"] == "https://abc.lambda-url.eu-west-1.on.aws"
    assert server["token_endpoint"] == "https://abc.lambda-url.eu-west-1.on.aws/token"
    assert resource["resource"] == "https://abc.lambda-url.eu-west-1.on.aws/mcp"


# -- the whole flow -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("redirect", [LOOPBACK, CLAUDE_AI])
def test_sign_in_gives_an_agent_token_of_the_chosen_workspace_with_state_and_iss(live, seeded, redirect):
    client, pkce = client_id(live.url, redirect), Pkce()
    request = request_id(authorize(live.url, client, pkce, redirect))
    result = answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))
    assert result["state"] == "st-1" and result["iss"] == live.url and result["code"]
    response = exchange(live.url, client, result["code"], pkce, redirect)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == oauth.ACCESS_SECONDS
    assert tokens["scope"] == "read write" and tokens["refresh_token"]
    assert mcp_status(live.url, tokens["access_token"]) == 200
    assert response.headers["cache-control"] == "no-store"


def test_a_loopback_redirect_may_use_any_port_but_nothing_else_may_differ(live):
    client, pkce = client_id(live.url, "http://127.0.0.1/callback"), Pkce()
    assert authorize(live.url, client, pkce, "http://127.0.0.1:54321/callback").status_code == 302
    for other in ("http://127.0.0.1:54321/other", "http://localhost:54321/callback", "https://127.0.0.1/callback"):
        response = authorize(live.url, client, pkce, other)
        assert response.status_code == 400 and "location" not in response.headers


@pytest.mark.anyio
async def test_a_signed_in_app_acts_in_its_workspace_only_and_not_on_the_rest_api(live, runtime, seeded):
    _, other = accounts.create_workspace(runtime.accounts, seeded.account_id, "Other", "")
    async with connected(live.url, other.token) as elsewhere:
        hidden = await elsewhere.create(title="Only in the other workspace", body="b")
    _, tokens = signed_in(live.url, seeded)
    async with connected(live.url, tokens["access_token"]) as app:
        mine = await app.create(title="Made by the signed-in app", body="b")
        text, is_error = await app("task", "list")
        assert not is_error and mine in text and hidden not in text
    human = bearer(seeded.human_token)
    made = httpx.get(f"{live.url}/api/workspaces/{seeded.workspace_id}/tasks/{mine}", headers=human)
    assert made.status_code == 200
    rest = httpx.get(f"{live.url}/api/workspaces", headers=bearer(tokens["access_token"]))
    assert rest.status_code == 403


def test_deny_sends_access_denied_with_state_and_iss_and_no_code(live, seeded):
    client, pkce = client_id(live.url), Pkce()
    result = answer(decide(live.url, seeded.human_token, request_id(authorize(live.url, client, pkce)), "deny"))
    assert result["error"] == "access_denied" and result["state"] == "st-1" and result["iss"] == live.url
    assert "code" not in result


def test_a_request_is_decided_once_and_only_into_the_humans_own_workspace(live, runtime, seeded):
    client, pkce = client_id(live.url), Pkce()
    request = request_id(authorize(live.url, client, pkce))
    stranger, _ = accounts.create_account(runtime.accounts, "Stranger")
    foreign_workspace, _ = accounts.create_workspace(runtime.accounts, stranger, "Theirs", "")
    foreign = decide(live.url, seeded.human_token, request, workspace=foreign_workspace.id)
    assert foreign.status_code == 404
    assert decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id).status_code == 200
    assert decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id).status_code == 404
    assert httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.human_token)).status_code == 404


def test_the_consent_request_names_the_client_unverified_the_scopes_and_the_workspaces(live, seeded):
    client, pkce = client_id(live.url, client_name="Totally Claude"), Pkce()
    request = request_id(authorize(live.url, client, pkce, scope="read"))
    shown = httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.human_token)).json()
    assert shown["client"]["name"] == "Totally Claude" and shown["client"]["verified"] is False
    assert shown["client"]["redirectHost"] == "127.0.0.1" and shown["scopes"] == ["read"]
    assert seeded.workspace_id in [workspace["id"] for workspace in shown["workspaces"]]
    agent = httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.agent_token))
    assert agent.status_code == 403


# -- registration ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "redirect",
    [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "http://evil.example/callback",
        "https://app.example/callback#fragment",
        "file:///etc/passwd",
        "https://user@app.example/callback",
    ],
)
def test_registration_refuses_a_redirect_uri_that_is_not_https_or_loopback(live, redirect):
    response = register(live.url, redirect)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"


def test_registration_accepts_https_loopback_and_a_native_apps_scheme(live):
    for redirect in (CLAUDE_AI, "http://localhost:33418/", "http://[::1]/cb", "cursor://anysphere.cursor-retrieval/cb"):
        assert register(live.url, redirect).status_code == 201, redirect


def test_registration_is_bounded_per_address_and_its_body_in_size(live, clock):
    clock.set(clock.now)  # one hour's window throughout
    statuses = [register(live.url).status_code for _ in range(oauth.REGISTRATIONS_PER_HOUR_PER_ADDRESS + 1)]
    assert statuses[:-1] == [201] * oauth.REGISTRATIONS_PER_HOUR_PER_ADDRESS
    assert statuses[-1] == 429
    huge = register(live.url, contacts=["x" * 1000] * 9)
    assert huge.status_code == 400 and huge.json()["error"] == "invalid_client_metadata"


def test_sign_in_requests_are_bounded_per_address(live, clock):
    clock.set(clock.now)
    client, pkce = client_id(live.url), Pkce()
    statuses = [
        authorize(live.url, client, pkce).status_code for _ in range(oauth.AUTHORIZATIONS_PER_MINUTE_PER_ADDRESS)
    ]
    assert statuses == [302] * oauth.AUTHORIZATIONS_PER_MINUTE_PER_ADDRESS
    refused = authorize(live.url, client, pkce)
    assert refused.status_code == 400 and "too many sign-in requests" in refused.text


def test_an_error_goes_back_only_to_a_redirect_someone_vouches_for(live):
    """RFC 9700 §4.11.2: anyone may register https://evil.example as a redirect; an error must not send the browser
    there (an open redirector), while a loopback redirect (this computer) gets the error as OAuth has it."""
    client, pkce = client_id(live.url, "https://evil.example/landing"), Pkce()
    for params in ({"scope": "bogus"}, {"resource": "https://other.example/mcp"}, {"code_challenge_method": "plain"}):
        response = authorize(live.url, client, pkce, "https://evil.example/landing", **params)
        assert response.status_code == 400 and "location" not in response.headers, params
        assert "Sign-in refused" in response.text


def test_an_oversized_challenge_or_state_is_refused(live):
    client, pkce = client_id(live.url), Pkce()
    for params in ({"code_challenge": "a" * 50_000}, {"state": "s" * (oauth.STATE_MAX + 1)}):
        response = authorize(live.url, client, pkce, **params)
        assert response.status_code == 302, params
        assert parse_qs(urlsplit(response.headers["location"]).query)["error"] == ["invalid_request"]


def test_an_unused_client_expires_and_a_used_one_stays(live, runtime, seeded, clock):
    unused = client_id(live.url)
    used, _ = signed_in(live.url, seeded)
    clock.advance(seconds=oauth.UNUSED_CLIENT_SECONDS + 1)
    assert authorize(live.url, unused, Pkce()).status_code == 400
    assert authorize(live.url, used, Pkce()).status_code == 302


def test_a_confidential_client_keeps_only_a_hash_of_its_secret_and_must_present_it(live, runtime, seeded):
    response = register(live.url, token_endpoint_auth_method="client_secret_post")
    registered = response.json()
    secret, client = registered["client_secret"], registered["client_id"]
    stored = runtime.clients.dynamodb.get_item(
        TableName=runtime.settings.table_name,
        Key={"PK": {"S": keys.oauth_client_pk(client)}, "SK": {"S": keys.OAUTH_SK}},
    )["Item"]
    assert secret not in json.dumps(stored) and stored["secretHash"]["S"] == hash_token(secret)

    def code_for(pkce: Pkce) -> str:
        request = request_id(authorize(live.url, client, pkce))
        return answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]

    pkce = Pkce()
    assert exchange(live.url, client, code_for(pkce), pkce).status_code == 401
    pkce = Pkce()
    assert exchange(live.url, client, code_for(pkce), pkce, client_secret="wrong").status_code == 401
    pkce = Pkce()
    assert exchange(live.url, client, code_for(pkce), pkce, client_secret=secret).status_code == 200
    pkce = Pkce()
    basic = base64.b64encode(f"{client}:{secret}".encode()).decode()
    form = {"grant_type": "authorization_code", "code": code_for(pkce), "redirect_uri": LOOPBACK}
    form |= {"client_id": client, "code_verifier": pkce.verifier}
    assert httpx.post(f"{live.url}/token", data=form, headers={"Authorization": f"Basic {basic}"}).status_code == 200


# -- authorization refusals -------------------------------------------------------------------------------------


def test_an_unknown_client_or_unregistered_redirect_gets_an_error_page_and_never_a_redirect(live):
    client, pkce = client_id(live.url), Pkce()
    for response in (
        authorize(live.url, "no-such-client", pkce),
        authorize(live.url, client, pkce, "https://attacker.example/steal"),
    ):
        assert response.status_code == 400 and "location" not in response.headers
        assert response.headers["content-type"].startswith("text/html")
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert "Sign-in refused" in response.text and "attacker" not in response.headers.get("location", "")


def test_a_resource_other_than_this_servers_mcp_url_is_refused(live):
    client, pkce = client_id(live.url), Pkce()
    response = authorize(live.url, client, pkce, resource="https://other.example/mcp")
    assert response.status_code == 302
    sent = parse_qs(urlsplit(response.headers["location"]).query)
    assert sent["error"] == ["invalid_target"] and sent["state"] == ["st-1"]


def test_pkce_is_required_and_only_s256(live):
    client, pkce = client_id(live.url), Pkce()
    for params in ({"code_challenge_method": "plain"}, {"code_challenge": None}):
        response = authorize(live.url, client, pkce, **params)
        assert response.status_code == 302
        assert parse_qs(urlsplit(response.headers["location"]).query)["error"] == ["invalid_request"]


def test_an_unknown_scope_is_refused_and_the_agent_repo_names_are_accepted(live, seeded):
    client, pkce = client_id(live.url), Pkce()
    response = authorize(live.url, client, pkce, scope="admin")
    assert parse_qs(urlsplit(response.headers["location"]).query)["error"] == ["invalid_scope"]
    request = request_id(authorize(live.url, client, pkce, scope="radars:read"))
    shown = httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.human_token)).json()
    assert shown["scopes"] == ["read"]


# -- codes and tokens -------------------------------------------------------------------------------------------


def test_a_code_needs_its_verifier_and_redirect_and_is_single_use_and_reuse_revokes_what_it_issued(live, seeded):
    client, pkce = client_id(live.url), Pkce()
    request = request_id(authorize(live.url, client, pkce))
    code = answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]
    assert exchange(live.url, client, code, Pkce()).json()["error"] == "invalid_grant"
    assert exchange(live.url, client, code, pkce, "http://127.0.0.1:8765/other").status_code == 400
    first = exchange(live.url, client, code, pkce)
    assert first.status_code == 200
    assert mcp_status(live.url, first.json()["access_token"]) == 200
    again = exchange(live.url, client, code, pkce)
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert mcp_status(live.url, first.json()["access_token"]) == 401
    assert refresh(live.url, client, first.json()["refresh_token"]).status_code == 400


def test_a_code_is_bound_to_its_client(live, seeded):
    client, pkce = client_id(live.url), Pkce()
    request = request_id(authorize(live.url, client, pkce))
    code = answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]
    assert exchange(live.url, client_id(live.url), code, pkce).json()["error"] == "invalid_grant"


def test_a_code_expires(live, seeded, clock):
    client, pkce = client_id(live.url), Pkce()
    request = request_id(authorize(live.url, client, pkce))
    code = answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]
    clock.advance(seconds=oauth.CODE_SECONDS + 1)
    assert exchange(live.url, client, code, pkce).json()["error"] == "invalid_grant"


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(live, seeded):
    client, first = signed_in(live.url, seeded)
    second = refresh(live.url, client, first["refresh_token"]).json()
    assert second["refresh_token"] != first["refresh_token"] and second["access_token"] != first["access_token"]
    assert mcp_status(live.url, first["access_token"]) == 401  # the refreshed-away token ends with its refresh
    assert mcp_status(live.url, second["access_token"]) == 200
    reused = refresh(live.url, client, first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert mcp_status(live.url, second["access_token"]) == 401
    assert refresh(live.url, client, second["refresh_token"]).status_code == 400


def test_an_access_token_expires_after_about_an_hour(live, seeded, clock):
    _, tokens = signed_in(live.url, seeded)
    clock.advance(seconds=oauth.ACCESS_SECONDS - 60)
    assert mcp_status(live.url, tokens["access_token"]) == 200
    clock.advance(seconds=61)
    assert mcp_status(live.url, tokens["access_token"]) == 401
    expired = httpx.post(f"{live.url}/mcp", json={}, headers=bearer(tokens["access_token"]))
    assert expired.headers["www-authenticate"].startswith('Bearer error="invalid_token", resource_metadata="')


@pytest.mark.parametrize("which", ["access_token", "refresh_token"])
def test_revocation_ends_the_grant_at_once(live, seeded, which):
    client, tokens = signed_in(live.url, seeded)
    response = httpx.post(f"{live.url}/revoke", data={"token": tokens[which], "client_id": client})
    assert response.status_code == 200
    assert mcp_status(live.url, tokens["access_token"]) == 401
    assert refresh(live.url, client, tokens["refresh_token"]).status_code == 400


def test_tokens_are_stored_as_hashes_only(live, runtime, seeded):
    _, tokens = signed_in(live.url, seeded)
    table = runtime.clients.dynamodb.scan(TableName=runtime.settings.table_name)["Items"]  # a test's own table
    dumped = json.dumps(table)
    assert tokens["access_token"] not in dumped and tokens["refresh_token"] not in dumped
    assert runtime.accounts.resolve_token(hash_token(tokens["access_token"])).kind is TokenKind.AGENT


# -- scopes --------------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_read_only_grant_reads_and_every_write_is_refused_with_insufficient_scope(live, seeded):
    async with connected(live.url, seeded.agent_token) as agent:
        task = await agent.create(title="Readable", body="b")
    _, tokens = signed_in(live.url, seeded, scope="read")
    async with connected(live.url, tokens["access_token"]) as app:
        text, is_error = await app("task", "list")
        assert not is_error and task in text
        for tool, action, payload in [
            ("task", "create", {"title": "Nope", "body": "b"}),
            ("memory", "save", {"content": "remember this"}),
        ]:
            text, is_error = await app(tool, action, **payload)
            assert is_error and "insufficient_scope" in text and "'write'" in text, text


# -- the human in control ---------------------------------------------------------------------------------------


def test_the_workspace_lists_its_connected_apps_and_revoking_one_ends_it(live, runtime, seeded):
    _, tokens = signed_in(live.url, seeded)
    assert mcp_status(live.url, tokens["access_token"]) == 200
    human = bearer(seeded.human_token)
    listed = httpx.get(f"{live.url}/api/workspaces/{seeded.workspace_id}/connected-apps", headers=human).json()
    [app] = listed["items"]
    assert app["clientName"] == "CLI" and app["scopes"] == ["read", "write"]
    assert app["connectedAt"] and app["lastUsedAt"]
    gone = httpx.delete(f"{live.url}/api/workspaces/{seeded.workspace_id}/connected-apps/{app['id']}", headers=human)
    assert gone.status_code == 204
    assert mcp_status(live.url, tokens["access_token"]) == 401
    after = httpx.get(f"{live.url}/api/workspaces/{seeded.workspace_id}/connected-apps", headers=human).json()
    assert after["items"] == []
    _, stranger = accounts.create_account(runtime.accounts, "Stranger")
    foreign = httpx.get(
        f"{live.url}/api/workspaces/{seeded.workspace_id}/connected-apps", headers=bearer(stranger.token)
    )
    assert foreign.status_code == 404


@pytest.mark.anyio
async def test_a_load_agent_session_belongs_to_the_grant_and_survives_a_token_refresh(live, seeded):
    """OMR: "A session belongs to your connection, not your access token, so it survives a token refresh"."""
    client, first = signed_in(live.url, seeded)
    async with connected(live.url, first["access_token"]) as app:
        text, is_error = await app("agent", "create", name="Release Captain", prompt="You run our releases.")
        assert not is_error, text
        loaded, is_error = await app.raw("load_agent", {"agent": "release-captain"})
        assert not is_error, loaded
    session = loaded.rsplit("Session: ", 1)[1][:36]
    second = refresh(live.url, client, first["refresh_token"]).json()
    async with connected(live.url, second["access_token"]) as app:
        remembered, is_error = await app.raw(
            "agent_remember",
            {
                "agent": "release-captain",
                "session": session,
                "name": "checklist",
                "type": "project",
                "body": "Smoke.",
                "description": "Steps",
            },
        )
        assert not is_error, remembered
    async with connected(live.url, seeded.agent_token) as other:  # another token of the workspace: not its session
        text, is_error = await other.raw(
            "agent_remember",
            {
                "agent": "release-captain",
                "session": session,
                "name": "other",
                "type": "project",
                "body": "x",
                "description": "d",
            },
        )
        assert is_error, text


def test_a_workspace_holds_a_bounded_number_of_connected_apps(live, runtime, seeded, monkeypatch):
    monkeypatch.setattr(oauth, "GRANTS_PER_WORKSPACE", 2)
    signed_in(live.url, seeded)
    signed_in(live.url, seeded)
    client, pkce = client_id(live.url), Pkce()
    refused = decide(
        live.url, seeded.human_token, request_id(authorize(live.url, client, pkce)), "allow", seeded.workspace_id
    )
    assert refused.status_code == 409 and "connected apps" in refused.json()["detail"]


def test_a_client_metadata_document_client_signs_in_and_is_shown_verified(live, runtime, seeded):
    document_url = "https://app.example/oauth/client.json"
    fetched: list[str] = []

    def fetch(url: str) -> dict:
        fetched.append(url)
        return {"client_id": url, "client_name": "Example App", "redirect_uris": ["https://app.example/callback"]}

    runtime.fetch_client_metadata = fetch
    pkce = Pkce()
    request = request_id(authorize(live.url, document_url, pkce, "https://app.example/callback"))
    shown = httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.human_token)).json()
    assert shown["client"]["name"] == "Example App" and shown["client"]["verified"] is True
    assert shown["client"]["registration"] == "metadata-document"
    code = answer(decide(live.url, seeded.human_token, request, workspace=seeded.workspace_id))["code"]
    tokens = exchange(live.url, document_url, code, pkce, "https://app.example/callback")
    assert tokens.status_code == 200, tokens.text
    assert fetched == [document_url]  # cached: the token endpoint did not fetch it again


def test_a_client_metadata_document_that_cannot_be_used_gets_an_error_page(live, runtime):
    def fetch(url: str) -> dict:
        if "bad-uri" in url:
            return {"client_id": url, "redirect_uris": ["https://bad.example/cb"], "client_uri": "javascript:alert(1)"}
        return {"client_id": url, "redirect_uris": ["javascript:alert(1)"]}

    runtime.fetch_client_metadata = fetch
    response = authorize(live.url, "https://bad.example/client.json", Pkce(), "javascript:alert(1)")
    assert response.status_code == 400 and "location" not in response.headers
    assert "javascript" in response.text and "not allowed" in response.text
    for _ in range(2):  # the second time from the remembered failure
        response = authorize(live.url, "https://bad.example/bad-uri.json", Pkce(), "https://bad.example/cb")
        assert response.status_code == 400 and "client_uri is not valid" in response.text


def test_a_known_document_client_is_not_locked_out_by_a_flood_or_a_failing_fetch(live, runtime, seeded, clock):
    clock.set(clock.now)
    document_url, redirect = "https://app.example/oauth/client.json", "https://app.example/callback"
    answers = [{"client_id": document_url, "client_name": "Example App", "redirect_uris": [redirect]}]

    def fetch(url: str) -> dict:
        if url != document_url:
            return {"client_id": url, "redirect_uris": [redirect.replace("app.example", "other.example")]}
        if not answers:
            raise ClientMetadataError("the client's metadata document could not be fetched: connection refused")
        return answers.pop()

    runtime.fetch_client_metadata = fetch
    assert authorize(live.url, document_url, Pkce(), redirect).status_code == 302
    for n in range(oauth.DOCUMENTS_PER_HOUR_PER_ADDRESS):  # someone fetches new documents until the budget is gone
        authorize(live.url, f"https://flood.example/{n}.json", Pkce(), "https://flood.example/cb")
    flooded = authorize(live.url, "https://flood.example/last.json", Pkce(), "https://flood.example/cb")
    assert "too many new clients" in flooded.text
    clock.advance(seconds=oauth.METADATA_CACHE_SECONDS + 1)  # stale now, and its host refuses the fetch
    assert authorize(live.url, document_url, Pkce(), redirect).status_code == 302


def test_a_document_with_a_loopback_redirect_is_not_verified_and_names_its_url(live, runtime, seeded):
    document_url = "https://evil.example/c.json"
    runtime.fetch_client_metadata = lambda url: {
        "client_id": url,
        "client_name": "Claude Desktop",
        "redirect_uris": ["http://127.0.0.1/callback"],
    }
    request = request_id(authorize(live.url, document_url, Pkce(), "http://127.0.0.1:4000/callback"))
    shown = httpx.get(f"{live.url}/api/oauth/requests/{request}", headers=bearer(seeded.human_token)).json()
    assert shown["client"]["verified"] is False and shown["client"]["uri"] == document_url


def test_a_read_only_grant_cannot_ask_through_the_channel(live, seeded):
    _, tokens = signed_in(live.url, seeded, scope="read")
    body = {"requestId": "r1", "toolName": "Bash", "description": "rm -rf /", "inputPreview": "{}"}
    asked = httpx.post(f"{live.url}/api/channel/permissions", json=body, headers=bearer(tokens["access_token"]))
    assert asked.status_code == 403 and "insufficient_scope" in asked.text
    events = httpx.get(f"{live.url}/api/channel/events", params={"wait": 0}, headers=bearer(tokens["access_token"]))
    assert events.status_code == 200


@pytest.mark.anyio
async def test_a_connection_granted_manage_may_change_an_own_agents_handle_and_no_other(live, seeded):
    """OMR update_agent: "Changing slug instead needs radars:manage and ownership of the agent"."""
    _, managing = signed_in(live.url, seeded, scope="read write manage")
    _, writing = signed_in(live.url, seeded, scope="read write")
    async with connected(live.url, managing["access_token"]) as app:
        made = json.loads((await app("agent", "create", name="Release Captain", prompt="Run releases."))[0])
        renamed, is_error = await app.raw("update_agent", {"agent": made["id"], "slug": "captain"})
        assert not is_error and json.loads(renamed)["slug"] == "captain", renamed
    for token in (writing["access_token"], seeded.agent_token):
        async with connected(live.url, token) as other:
            text, is_error = await other.raw("update_agent", {"agent": made["id"], "slug": "stolen"})
            assert is_error and "manage scope" in text, text


def test_a_sign_in_may_ask_for_any_of_the_servers_mcp_paths(live, seeded):
    client, pkce = client_id(live.url), Pkce()
    for path in ("/mcp/agentrq", "/mcp/masaro", "/mcp/omr"):
        assert authorize(live.url, client, pkce, resource=f"{live.url}{path}").status_code == 302
        assert urlsplit(authorize(live.url, client, pkce, resource=f"{live.url}{path}").headers["location"]).path == (
            "/oauth/consent"
        )
    refused = authorize(live.url, client, pkce, resource=f"{live.url}/mcp/other")
    assert parse_qs(urlsplit(refused.headers["location"]).query)["error"] == ["invalid_target"]
