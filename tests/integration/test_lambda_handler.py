"""The deployed entry point, functions/api/app.py's `handler`, driven in-process by the events/ samples.

Each test loads the handler module afresh with the environment a Function URL deployment gives it
(pointed at moto), then invokes it the way the Lambda runtime does: one event dict and a context
object per call, many calls on one loaded module.
"""

import asyncio
import copy
import json
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from agent_workspace.mcp_server import help_text
from agent_workspace.mcp_server.server import INSTRUCTIONS
from agent_workspace.tools import REGISTRY
from tests.support import FUNCTION_NAMES, ROOT, LambdaContext, load_function

EVENTS = ROOT / "events"
TOKEN_PLACEHOLDER = "REPLACE_WITH_TOKEN"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: str

    def json(self) -> Any:
        return json.loads(self.body)


class Lambda:
    """One loaded handler module, invoked like a warm Lambda execution environment invokes it."""

    def __init__(self, handler: Any) -> None:
        self._handler = handler

    def invoke(self, event: dict[str, Any], remaining_ms: int = 900_000) -> Reply:
        context = LambdaContext(FUNCTION_NAMES["api"], event["requestContext"]["requestId"], remaining_ms)
        response = self._handler(event, context)
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        assert response.get("isBase64Encoded") is not True, "a JSON API should answer with a text body"
        return Reply(response["statusCode"], headers, response.get("body", ""))


def load_event(name: str, token: str | None = None, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """A sample event, with the placeholder swapped for `token` (or the Authorization header dropped)."""
    event = json.loads((EVENTS / name).read_text())
    headers = event["headers"]
    if token is None:
        headers.pop("authorization", None)
    elif "authorization" in headers:
        headers["authorization"] = headers["authorization"].replace(TOKEN_PLACEHOLDER, token)
    if body is not None:
        event["body"] = json.dumps(body)
    event["requestContext"]["requestId"] = f"{event['requestContext']['requestId'][:-8]}{secrets.token_hex(4)}"
    return event


def with_path(event: dict[str, Any], path: str) -> dict[str, Any]:
    event = copy.deepcopy(event)
    event["rawPath"] = path
    event["requestContext"]["http"]["path"] = path
    return event


@pytest.fixture
def aws_lambda(runtime, monkeypatch) -> Lambda:
    """functions/api/app.py loaded under the environment template.yaml gives it, on this test's resources."""
    return Lambda(load_function("api", runtime, monkeypatch).handler)


def result_of(reply: Reply) -> dict[str, Any]:
    assert reply.status == 200, f"{reply.status}: {reply.body}"
    assert reply.headers["content-type"].startswith("application/json")
    message = reply.json()
    assert "error" not in message, message
    return message["result"]


def text_of_json(result: dict[str, Any]) -> str:
    """The text of a tool result as JSON-RPC carries it (the raw JSON, not the SDK's objects)."""
    return "".join(block["text"] for block in result["content"] if block["type"] == "text")


def test_initialize_answers_with_server_info_and_instructions(aws_lambda, seeded):
    reply = aws_lambda.invoke(load_event("mcp_initialize.json", seeded.agent_token))

    result = result_of(reply)
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "agent-workspace"
    assert result["serverInfo"]["title"] == "Agent Workspace"
    assert result["instructions"] == INSTRUCTIONS
    assert "tools" in result["capabilities"]
    # Stateless: no session for the client to carry to the next invocation.
    assert "mcp-session-id" not in reply.headers


def test_tools_list_names_every_tool_and_help(aws_lambda, seeded):
    result = result_of(aws_lambda.invoke(load_event("mcp_tools_list.json", seeded.agent_token)))

    tools = {tool["name"]: tool for tool in result["tools"]}
    assert list(tools) == [*REGISTRY.tool_names, "help"]
    assert tools["workspace"]["inputSchema"]["required"] == ["action"]
    assert tools["help"]["annotations"]["readOnlyHint"] is True


def test_tools_call_help_returns_the_overview(aws_lambda, seeded):
    result = result_of(aws_lambda.invoke(load_event("mcp_tools_call_help.json", seeded.agent_token)))

    assert result["isError"] is False
    assert text_of_json(result) == help_text.overview(REGISTRY)
    assert text_of_json(result).startswith(help_text.CALL_SHAPE)


def test_stateless_2026_07_28_tools_call_gets_the_workspace(aws_lambda, seeded):
    result = result_of(aws_lambda.invoke(load_event("mcp_tools_call_modern.json", seeded.agent_token)))

    assert result["isError"] is False
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "agent-workspace"
    workspace = json.loads(text_of_json(result))
    assert workspace["id"] == seeded.workspace_id
    assert workspace["title"] == "Local workspace"


def test_2026_07_28_call_whose_routing_header_disagrees_with_the_body_is_refused(aws_lambda, seeded):
    event = load_event("mcp_tools_call_modern.json", seeded.agent_token)
    event["headers"]["mcp-name"] = "help"

    reply = aws_lambda.invoke(event)

    assert reply.status == 400
    assert "mcp-name" in reply.json()["error"]["message"]


def test_warm_invocations_keep_serving_after_the_first(aws_lambda, seeded):
    """One loaded module, many events: nothing per-process may be single-use (the SDK manager's run())."""
    overview = help_text.overview(REGISTRY)
    for number in range(1, 26):
        body = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {"name": "help", "arguments": {}}}
        reply = aws_lambda.invoke(load_event("mcp_tools_call_help.json", seeded.agent_token, body=body))
        assert reply.status == 200, f"invocation {number}: {reply.status} {reply.body}"
        message = reply.json()
        assert message["id"] == number
        assert text_of_json(message["result"]) == overview

    # Other request kinds on the same warm module still work after the run of calls.
    modern = result_of(aws_lambda.invoke(load_event("mcp_tools_call_modern.json", seeded.agent_token)))
    assert json.loads(text_of_json(modern))["id"] == seeded.workspace_id
    assert result_of(aws_lambda.invoke(load_event("mcp_initialize.json", seeded.agent_token)))["serverInfo"]


def test_get_mcp_is_refused_with_405_instead_of_opening_a_stream(aws_lambda, seeded):
    event = load_event("mcp_get.json", seeded.agent_token)
    outcome: list[Any] = []

    def invoke_in_own_thread() -> None:
        loop = asyncio.new_event_loop()  # Mangum runs each invocation on the thread's current loop
        asyncio.set_event_loop(loop)
        try:
            outcome.append(aws_lambda.invoke(event))
        except BaseException as error:  # re-raised below, in the test's thread
            outcome.append(error)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    # A stateless GET would otherwise open an SSE stream that never ends: run it where a hang is visible.
    worker = threading.Thread(target=invoke_in_own_thread, daemon=True)
    worker.start()
    worker.join(timeout=15)

    assert not worker.is_alive(), "GET /mcp did not return: a Lambda would hang until its timeout"
    (reply,) = outcome
    if isinstance(reply, BaseException):
        raise reply
    assert reply.status == 405
    assert reply.headers["allow"] == "POST"
    assert "POST" in reply.json()["detail"]


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
def test_post_to_mcp_is_served_without_a_redirect(aws_lambda, seeded, path):
    """Clients do not re-POST a body across a 307; both spellings must be answered in place."""
    reply = aws_lambda.invoke(with_path(load_event("mcp_tools_call_help.json", seeded.agent_token), path))

    assert reply.status != 307, f"POST {path} redirected to {reply.headers.get('location')}"
    assert "location" not in reply.headers
    assert text_of_json(result_of(reply)) == help_text.overview(REGISTRY)


def test_function_url_host_is_not_refused_as_dns_rebinding(aws_lambda, seeded):
    event = load_event("mcp_initialize.json", seeded.agent_token)
    function_url_host = event["requestContext"]["domainName"]
    assert event["headers"]["host"] == function_url_host
    assert function_url_host.endswith(".lambda-url.us-east-1.on.aws")

    reply = aws_lambda.invoke(event)

    assert reply.status != 421, reply.body
    assert result_of(reply)["serverInfo"]["name"] == "agent-workspace"


def test_mcp_without_a_token_gets_401_pointing_at_resource_metadata(aws_lambda, seeded):
    event = load_event("mcp_tools_call_help.json", token=None)
    assert "authorization" not in event["headers"]

    reply = aws_lambda.invoke(event)

    assert reply.status == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    host = event["requestContext"]["domainName"]
    assert f'resource_metadata="https://{host}/.well-known/oauth-protected-resource"' in challenge
    assert "missing bearer token" in reply.json()["detail"]


def test_mcp_with_an_unknown_token_gets_401(aws_lambda, seeded):
    reply = aws_lambda.invoke(load_event("mcp_tools_call_help.json", "aw_agent_" + secrets.token_urlsafe(32)))

    assert reply.status == 401
    assert "resource_metadata=" in reply.headers["www-authenticate"]


def test_health_answers_without_a_token(aws_lambda):
    event = load_event("health.json", token=None)
    assert "authorization" not in event["headers"]

    reply = aws_lambda.invoke(event)

    assert reply.status == 200
    assert reply.json() == {"status": "ok"}


def test_human_lists_workspaces_through_the_rest_api(aws_lambda, seeded):
    reply = aws_lambda.invoke(load_event("api_list_workspaces.json", seeded.human_token))

    assert reply.status == 200, reply.body
    assert [w["id"] for w in reply.json()] == [seeded.workspace_id]


def test_rest_api_refuses_an_agent_token(aws_lambda, seeded):
    reply = aws_lambda.invoke(load_event("api_list_workspaces.json", seeded.agent_token))

    assert reply.status == 403


def test_an_elicit_longer_than_the_invocation_returns_pending_before_the_invocation_ends(aws_lambda, runtime, seeded):
    from agent_workspace.services.tasks import Actor, NewTask, create_task

    task = create_task(runtime, Actor("human", seeded.account_id, seeded.workspace_id, "t"), NewTask("Ask", ""))
    ask = {"taskId": task.id, "message": "Ship it?", "mode": "url", "url": "https://example.com/ok"}
    event = load_event(
        "mcp_tools_call_help.json",
        seeded.agent_token,
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "task", "arguments": {"action": "elicit", "payload": ask}},
        },
    )
    started = time.monotonic()
    reply = aws_lambda.invoke(event, remaining_ms=11_500)  # the margin before the end is 10 s by default
    elapsed = time.monotonic() - started
    parked = json.loads(text_of_json(result_of(reply)))
    assert parked["action"] == "pending" and 0.5 < elapsed < 11.5
    assert [q.id for q in runtime.elicitations.list_by_status(seeded.workspace_id, "pending")] == [
        parked["elicitationId"]
    ]


def test_a_bridge_poll_longer_than_the_invocation_answers_empty_before_the_invocation_ends(aws_lambda, seeded):
    event = with_path(load_event("api_list_workspaces.json", seeded.human_token), "/api/bridge/calls")
    event["rawQueryString"] = "wait=25"
    started = time.monotonic()
    reply = aws_lambda.invoke(event, remaining_ms=11_500)  # 10 s of margin leave 1.5 s to wait
    elapsed = time.monotonic() - started
    assert reply.status == 200, reply.body
    assert reply.json() == {"calls": []} and 1 < elapsed < 5
