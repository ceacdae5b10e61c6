"""Each reference's tools on a path of its own (issue 34): /mcp unchanged, /mcp/agentrq AgentRQ's seven,
/mcp/masaro Masaro's 19, /mcp/omr On My Radar's 21; the same tokens and sign-in on each; nothing else under /mcp."""

import httpx
import pytest

from agent_workspace.mcp_server.legacy import AGENTRQ_NAMES, MASARO_NAMES, OMR_NAMES
from tests.support import bearer

JSON_RPC = {"Accept": "application/json, text/event-stream"}
AGENTRQ_SEVEN = ["task", "memory", "skills", "workspace", "siteTools", "pano", "help"]
WORKSPACE_NINE = ["task", "memory", "skills", "workspace", "siteTools", "pano", "board", "agent", "help"]


def rpc(url: str, token: str | None, method: str, params: dict | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method} | ({"params": params} if params else {})
    return httpx.post(url, json=body, headers=(bearer(token) if token else {}) | JSON_RPC)


def listed(url: str, token: str) -> list[dict]:
    response = rpc(url, token, "tools/list")
    assert response.status_code == 200, response.text
    return response.json()["result"]["tools"]


def called(url: str, token: str, name: str, arguments: dict) -> tuple[str, bool]:
    result = rpc(url, token, "tools/call", {"name": name, "arguments": arguments}).json()["result"]
    return result["content"][0]["text"], result["isError"]


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("/mcp", WORKSPACE_NINE),
        ("/mcp/agentrq", AGENTRQ_SEVEN),
        ("/mcp/masaro", list(MASARO_NAMES)),
        ("/mcp/omr", list(OMR_NAMES)),
    ],
)
def test_each_path_lists_exactly_its_references_tools(live, seeded, path, names):
    tools = listed(f"{live.url}{path}", seeded.agent_token)
    assert [tool["name"] for tool in tools] == names
    for tool in tools:
        assert tool["description"] and tool["inputSchema"]["type"] == "object" and "annotations" in tool


@pytest.mark.parametrize("path", ["/mcp/masaro", "/mcp/omr"])
def test_a_references_tool_takes_its_arguments_flat_with_its_own_hints(live, seeded, path):
    for tool in listed(f"{live.url}{path}", seeded.agent_token):
        assert "action" not in tool["inputSchema"].get("properties", {}), tool["name"]
        hints = tool["annotations"]
        assert {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} <= set(hints), tool["name"]


def test_any_other_path_under_mcp_is_not_found_for_every_method(live, seeded):
    for path in ("/mcp/other", "/mcp/masaro/extra", "/mcp/OMR"):
        for method in ("GET", "POST", "DELETE"):
            response = httpx.request(method, f"{live.url}{path}", headers=bearer(seeded.agent_token))
            assert response.status_code == 404, (path, method)


def test_a_path_answers_only_what_it_lists_and_names_it_as_called(live, seeded):
    masaro = f"{live.url}/mcp/masaro"
    text, is_error = called(masaro, seeded.agent_token, "task", {"action": "list"})
    assert is_error and text.startswith("unknown tool 'task'; tools: get_workspace_context,")
    text, is_error = called(masaro, seeded.agent_token, "create_task", {"title": 5})
    assert is_error and text.startswith("create_task: ")
    text, is_error = called(f"{live.url}/mcp/omr", seeded.agent_token, "claim_task", {"taskId": "x"})
    assert is_error and text.startswith("unknown tool 'claim_task'; tools: list_agents,")
    agentrq = f"{live.url}/mcp/agentrq"
    text, is_error = called(agentrq, seeded.agent_token, "getWorkspace", {})  # AgentRQ's old names still answer
    assert not is_error and seeded.workspace_id in text
    text, is_error = called(agentrq, seeded.agent_token, "board", {"action": "context"})
    assert is_error and "unknown tool 'board'" in text
    assert set(AGENTRQ_NAMES) & {"getWorkspace"}
    text, is_error = called(f"{live.url}/mcp", seeded.agent_token, "create_task", {"title": 5})
    assert is_error and text.startswith("create_task: ")  # on every path


def test_the_same_token_rules_and_sign_in_hold_on_every_path(live, seeded):
    for path in ("/mcp/agentrq", "/mcp/masaro", "/mcp/omr"):
        refused = rpc(f"{live.url}{path}", None, "tools/list")
        assert refused.status_code == 401
        metadata_url = refused.headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
        assert metadata_url == f"{live.url}/.well-known/oauth-protected-resource{path}"
        metadata = httpx.get(metadata_url).json()
        assert metadata["resource"] == f"{live.url}{path}" and metadata["authorization_servers"] == [live.url]
        assert rpc(f"{live.url}{path}", seeded.human_token, "tools/list").status_code == 403
        assert rpc(f"{live.url}{path}", "aw_agent_made-up", "tools/list").status_code == 401
