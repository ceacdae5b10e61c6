"""Issue 32: hostile JSON-RPC bodies at /mcp.

Bodies that are not JSON, JSON that is not one JSON-RPC message (batches, scalars, objects with the members of
the wrong type), and messages of the right shape with arbitrary values, each POSTed with a valid agent token.

The property: the answer is served (200, or 202 for a notification or response) or a plain JSON-RPC error (400,
no id, the parse-error or invalid-request code with the endpoint's own message); never a 5xx, and never
pydantic's texts, Python's type or exception names or stack details. `FUZZ_EXAMPLES` sets the examples.
"""

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_workspace.local.stack import local_runtime, seed
from agent_workspace.mcp_server.endpoint import BATCH, NOT_A_MESSAGE, NOT_JSON
from tests.fuzz.test_tools_fuzz import FUZZ
from tests.integration.test_auth_and_api import INTERNALS, MCP_HEADERS
from tests.support import LiveServer, bearer

PLAIN_ERRORS = {(-32700, NOT_JSON), (-32600, BATCH), (-32600, NOT_A_MESSAGE)}

json_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
MEMBERS = ["jsonrpc", "id", "method", "params", "result", "error"]
# An object with some of JSON-RPC's members, each of any type, and the right values mixed in.
message_like = st.dictionaries(
    st.sampled_from(MEMBERS) | st.text(max_size=8),
    json_value | st.sampled_from(["2.0", "initialize", "tools/list", "tools/call", 1, "x"]),
    max_size=6,
)
json_body = (message_like | json_value | st.lists(message_like, max_size=3)).map(lambda v: json.dumps(v).encode())
raw_body = st.binary(max_size=200) | st.sampled_from([b"[" * 5000, b"{" * 5000, b'{"a":"\\ud800"}', b"\xef\xbb\xbf{}"])


class Mcp:
    def __init__(self, live: LiveServer, token: str) -> None:
        self._client = httpx.Client(base_url=live.url, headers={**MCP_HEADERS, **bearer(token)}, timeout=30)

    def post(self, body: bytes) -> httpx.Response:
        return self._client.post("/mcp", content=body)


@pytest.fixture(scope="module")
def mcp(moto_endpoint, aws_clients) -> Iterator[Mcp]:
    runtime = local_runtime(moto_endpoint, clients=aws_clients)
    seeded = seed(runtime)
    with LiveServer(runtime) as live:
        yield Mcp(live, seeded.agent_token)


def assert_served_or_plainly_refused(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code in (200, 202):
        return
    assert response.status_code == 400, response.text
    body: Any = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None, body
    assert (body["error"]["code"], body["error"]["message"]) in PLAIN_ERRORS, body
    assert not INTERNALS.search(response.text), response.text


@FUZZ
@given(body=json_body)
def test_json_that_is_not_one_message_is_refused_plainly(mcp, body):
    assert_served_or_plainly_refused(mcp.post(body))


@FUZZ
@given(body=raw_body)
def test_bytes_that_are_not_json_are_refused_plainly(mcp, body):
    assert_served_or_plainly_refused(mcp.post(body))
