"""Authentication, isolation and the human REST API, over real HTTP against uvicorn."""

import json
import re

import httpx
import pytest

from agent_workspace.local.stack import seed
from tests.support import bearer

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def mcp_call(live, token: str | None, body: dict, **headers: str) -> httpx.Response:
    sent = {**MCP_HEADERS, **headers}
    if token:
        sent["authorization"] = f"Bearer {token}"
    return httpx.post(f"{live.url}/mcp", json=body, headers=sent, timeout=10)


def workspace_get(live, token: str) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "workspace", "arguments": {"action": "get"}},
    }
    return mcp_call(live, token, body, **{"mcp-protocol-version": "2025-06-18"})


def result_text(response: httpx.Response) -> str:
    return response.json()["result"]["content"][0]["text"]


def test_initialize_with_2025_06_18_answers_that_version_with_instructions(live, seeded):
    response = mcp_call(live, seeded.agent_token, INIT)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "agent-workspace"
    assert 'workspace {"action": "get"}' in result["instructions"]


def test_missing_token_gets_401_pointing_at_the_resource_metadata(live, seeded):
    response = mcp_call(live, None, INIT)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge == f'Bearer resource_metadata="{live.url}/.well-known/oauth-protected-resource"'
    metadata = httpx.get(f"{live.url}/.well-known/oauth-protected-resource").json()
    assert metadata["resource"] == f"{live.url}/mcp"
    assert metadata["bearer_methods_supported"] == ["header"]


def test_unknown_token_gets_401(live, seeded):
    assert mcp_call(live, "aw_agent_not-a-real-token", INIT).status_code == 401


def test_token_in_the_query_string_is_ignored_and_never_logged(live, seeded, logged):
    response = httpx.post(
        f"{live.url}/mcp?access_token={seeded.agent_token}&token={seeded.agent_token}", json=INIT, headers=MCP_HEADERS
    )
    assert response.status_code == 401
    api = httpx.get(f"{live.url}/api/workspaces?access_token={seeded.human_token}")
    assert api.status_code == 401
    assert seeded.agent_token not in logged.getvalue() and seeded.human_token not in logged.getvalue()


def test_human_token_cannot_use_mcp_and_agent_token_cannot_use_the_api(live, seeded):
    assert mcp_call(live, seeded.human_token, INIT).status_code == 403
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.agent_token)).status_code == 403


def test_health_needs_no_token(live):
    assert httpx.get(f"{live.url}/health").json() == {"status": "ok"}


def test_get_on_mcp_is_refused_instead_of_opening_an_endless_stream(live, seeded):
    response = httpx.get(
        f"{live.url}/mcp", headers={**bearer(seeded.agent_token), "accept": "text/event-stream"}, timeout=5
    )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def test_foreign_origin_is_refused_and_own_origin_is_allowed(live, seeded):
    assert mcp_call(live, seeded.agent_token, INIT, origin="http://evil.example").status_code == 403
    assert mcp_call(live, seeded.agent_token, INIT, origin=live.url).status_code == 200
    api = httpx.get(
        f"{live.url}/api/workspaces", headers={**bearer(seeded.human_token), "origin": "http://evil.example"}
    )
    assert api.status_code == 403


def test_a_new_workspace_gets_an_agent_token_that_reaches_only_it(live, seeded):
    created = httpx.post(
        f"{live.url}/api/workspaces",
        json={"title": "Release", "mission": "Ship v1"},
        headers=bearer(seeded.human_token),
    )
    assert created.status_code == 201
    body = created.json()
    assert set(body) >= {"id", "title", "mission", "agentToken", "tokenId"}
    got = json.loads(result_text(workspace_get(live, body["agentToken"])))
    assert (got["id"], got["title"], got["mission"]) == (body["id"], "Release", "Ship v1")
    original = json.loads(result_text(workspace_get(live, seeded.agent_token)))
    assert original["id"] == seeded.workspace_id
    listed = httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token)).json()
    assert {w["id"] for w in listed} == {seeded.workspace_id, body["id"]}


def test_a_revoked_token_gets_401_on_its_next_call(live, seeded):
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}/tokens"
    minted = httpx.post(base, headers=bearer(seeded.human_token))
    assert minted.status_code == 201
    token, token_id = minted.json()["agentToken"], minted.json()["id"]
    assert workspace_get(live, token).status_code == 200
    assert token_id in {t["id"] for t in httpx.get(base, headers=bearer(seeded.human_token)).json()}
    assert httpx.delete(f"{base}/{token_id}", headers=bearer(seeded.human_token)).status_code == 204
    assert workspace_get(live, token).status_code == 401
    assert workspace_get(live, seeded.agent_token).status_code == 200
    assert httpx.delete(f"{base}/{token_id}", headers=bearer(seeded.human_token)).status_code == 404


def test_another_accounts_human_sees_nothing_of_this_workspace(live, runtime, seeded):
    stranger = seed(runtime)
    base = f"{live.url}/api/workspaces/{seeded.workspace_id}"
    headers = bearer(stranger.human_token)
    assert httpx.get(base, headers=headers).status_code == 404
    assert httpx.post(f"{base}/tokens", headers=headers).status_code == 404
    assert httpx.get(f"{base}/tokens", headers=headers).status_code == 404
    own_tokens = httpx.get(f"{base}/tokens", headers=bearer(seeded.human_token)).json()
    assert httpx.delete(f"{base}/tokens/{own_tokens[0]['id']}", headers=headers).status_code == 404
    assert workspace_get(live, seeded.agent_token).status_code == 200
    listed = httpx.get(f"{live.url}/api/workspaces", headers=headers).json()
    assert [w["id"] for w in listed] == [stranger.workspace_id]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"mission": "m"}, "missing required field 'title'"),
        ({"title": "t", "colour": "red"}, "unknown field 'colour'"),
        ({"title": 5}, "field 'title'"),
        ({"title": ""}, "field 'title'"),
    ],
)
def test_bad_workspace_bodies_get_422_naming_the_field(live, seeded, body, expected):
    response = httpx.post(f"{live.url}/api/workspaces", json=body, headers=bearer(seeded.human_token))
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert expected in response.json()["detail"]


def test_tokens_are_stored_only_as_hashes(live, runtime, seeded):
    minted = httpx.post(f"{live.url}/api/workspaces/{seeded.workspace_id}/tokens", headers=bearer(seeded.human_token))
    raw = json.dumps(runtime.clients.dynamodb.scan(TableName=runtime.settings.table_name)["Items"])
    for token in (seeded.agent_token, seeded.human_token, minted.json()["agentToken"]):
        assert token not in raw
        assert token.split("_", 2)[2] not in raw


def test_request_bodies_over_the_limit_are_refused_before_they_are_read(moto_endpoint, aws_clients):
    from agent_workspace.local.stack import local_runtime
    from tests.support import LiveServer

    small = local_runtime(moto_endpoint, clients=aws_clients, max_request_bytes=1024)
    seeded = seed(small)
    with LiveServer(small) as live:
        big = {"title": "x" * 2048}
        assert httpx.post(f"{live.url}/api/workspaces", json=big, headers=bearer(seeded.human_token)).status_code == 413
        padded = {**INIT, "params": {**INIT["params"], "clientInfo": {"name": "x" * 2048, "version": "1"}}}
        assert mcp_call(live, seeded.agent_token, padded).status_code == 413
        assert mcp_call(live, seeded.agent_token, INIT).status_code == 200


def test_the_human_lists_mints_and_revokes_the_accounts_human_tokens(live, runtime, seeded):
    base = f"{live.url}/api/tokens"
    listed = httpx.get(base, headers=bearer(seeded.human_token))
    assert listed.status_code == 200 and [t["current"] for t in listed.json()] == [True]
    minted = httpx.post(base, headers=bearer(seeded.human_token))
    assert minted.status_code == 201
    spare, spare_id = minted.json()["humanToken"], minted.json()["id"]
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(spare)).status_code == 200
    assert {t["id"]: t["current"] for t in httpx.get(base, headers=bearer(spare)).json()}[spare_id] is True

    assert httpx.delete(f"{base}/{spare_id}", headers=bearer(seeded.human_token)).status_code == 204
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(spare)).status_code == 401
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token)).status_code == 200


def test_human_token_routes_never_reach_agent_tokens_or_another_account(live, runtime, seeded):
    agent_tokens = httpx.get(
        f"{live.url}/api/workspaces/{seeded.workspace_id}/tokens", headers=bearer(seeded.human_token)
    ).json()
    assert (
        httpx.delete(f"{live.url}/api/tokens/{agent_tokens[0]['id']}", headers=bearer(seeded.human_token)).status_code
        == 404
    )
    assert workspace_get(live, seeded.agent_token).status_code == 200
    stranger = seed(runtime)
    own = httpx.get(f"{live.url}/api/tokens", headers=bearer(seeded.human_token)).json()
    assert (
        httpx.delete(f"{live.url}/api/tokens/{own[0]['id']}", headers=bearer(stranger.human_token)).status_code == 404
    )
    assert httpx.get(f"{live.url}/api/tokens", headers=bearer(seeded.agent_token)).status_code == 403
    assert httpx.get(f"{live.url}/api/workspaces", headers=bearer(seeded.human_token)).status_code == 200


# -- malformed JSON-RPC bodies -------------------------------------------------------------------

# What must never reach a caller: pydantic's texts, Python's names for types and exceptions, stack details.
INTERNALS = re.compile(
    r"pydantic|validation error|input_value|input_type|type=|union\[|Traceback|File \"|line \d+ column|"
    r"JSONRPC(Request|Notification|Response|Error)|model_type|errors\.pydantic|NoneType|\bdict\b|\blist\b|Exception",
    re.IGNORECASE,
)


def assert_plain_jsonrpc_error(response: httpx.Response, code: int) -> str:
    """A JSON-RPC error with no id, the given code and a message of our own; returned."""
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert set(body["error"]) == {"code", "message"} and body["error"]["code"] == code, body
    message = body["error"]["message"]
    assert not INTERNALS.search(message), message
    assert len(message) < 300, message
    return message


def mcp_raw(live, token: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{live.url}/mcp", content=body, headers={**MCP_HEADERS, **bearer(token)}, timeout=10)


@pytest.mark.parametrize(
    "body",
    [
        json.dumps([INIT]).encode(),
        b"[]",
        b"[1, 2]",
        json.dumps([INIT, INIT]).encode(),
    ],
    ids=["batch-of-one", "empty-batch", "batch-of-numbers", "batch-of-two"],
)
def test_a_json_rpc_batch_gets_a_plain_invalid_request_error(live, seeded, body):
    message = assert_plain_jsonrpc_error(mcp_raw(live, seeded.agent_token, body), -32600)
    assert "batch" in message


@pytest.mark.parametrize(
    "body",
    [
        b'"a string"',
        b"null",
        b"42",
        b'{"jsonrpc": "2.0"}',
        b'{"jsonrpc": "1.0", "id": 1, "method": "initialize"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": null}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": []}',
        b'{"jsonrpc": "2.0", "id": 1, "method": 7}',
    ],
)
def test_a_malformed_json_rpc_message_gets_a_plain_invalid_request_error(live, seeded, body):
    assert_plain_jsonrpc_error(mcp_raw(live, seeded.agent_token, body), -32600)


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"jsonrpc": "2.0",', b"\xff\xfe", b"[" * 100_000, b'{"a": "\\ud800"'],
    ids=["words", "cut-short", "not-utf8", "nested-100000-deep", "unterminated-surrogate"],
)
def test_a_body_that_is_not_json_gets_a_plain_parse_error(live, seeded, body):
    assert_plain_jsonrpc_error(mcp_raw(live, seeded.agent_token, body), -32700)
