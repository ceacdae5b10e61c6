"""`make serve`'s entry point, run as a user runs it: a process that serves the seeded workspace."""

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from tests.support import free_port, mcp_client, text_of, wait_until_healthy


@pytest.fixture
def served():
    port = free_port()
    env = {
        **os.environ,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "WORKSPACE_DEV_AGENT_TOKEN": "aw_agent_fixed-for-scripts-0123456789abcdef",
        "WORKSPACE_DEV_HUMAN_TOKEN": "aw_human_fixed-for-scripts-0123456789abcdef",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_workspace.local"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(url, process, process.stdout.read)
    yield url, env, process
    process.terminate()
    process.wait(timeout=10)


@pytest.mark.anyio
async def test_serve_prints_the_connection_details_and_answers_with_the_dev_tokens(served):
    url, env, process = served
    async with mcp_client(url, env["WORKSPACE_DEV_AGENT_TOKEN"]) as client:
        result = await client.call_tool("workspace", {"action": "get"})
        legacy = await client.call_tool("getWorkspace", {})
    assert json.loads(text_of(result))["title"] == "Local workspace"
    assert text_of(legacy) == text_of(result)
    listed = httpx.get(f"{url}/api/workspaces", headers={"authorization": f"Bearer {env['WORKSPACE_DEV_HUMAN_TOKEN']}"})
    assert [w["title"] for w in listed.json()] == ["Local workspace"]
    misplaced = httpx.get(f"{url}/api/workspaces?access_token={env['WORKSPACE_DEV_HUMAN_TOKEN']}")
    assert misplaced.status_code == 401

    process.terminate()
    output, _ = process.communicate(timeout=10)
    assert f"MCP URL:      {url}/mcp" in output
    assert env["WORKSPACE_DEV_AGENT_TOKEN"] in output and env["WORKSPACE_DEV_HUMAN_TOKEN"] in output
    _, _, after_banner = output.partition("Add this to .mcp.json for Claude Code:\n")
    snippet, _, log = after_banner.partition("\n\n")
    server = json.loads(snippet)["mcpServers"]["agent-workspace"]
    assert server == {
        "type": "http",
        "url": f"{url}/mcp",
        "headers": {"Authorization": f"Bearer {env['WORKSPACE_DEV_AGENT_TOKEN']}"},
    }
    # One access line per request, without the query string, and no token in the log.
    requests = [json.loads(line) for line in log.splitlines() if line.startswith('{"level"')]
    requests = [(r["method"], r["path"], r["status"]) for r in requests if r["message"] == "request"]
    assert ("GET", "/api/workspaces", 401) in requests and ("POST", "/mcp", 200) in requests
    assert env["WORKSPACE_DEV_HUMAN_TOKEN"] not in log and "access_token" not in log


@pytest.mark.anyio
async def test_serve_fans_a_published_event_out_without_any_aws(served):
    """The local drivers stand in for SQS → Lambda: a publication becomes a trigger task by itself."""
    url, env, _ = served
    human = {"authorization": f"Bearer {env['WORKSPACE_DEV_HUMAN_TOKEN']}"}
    (workspace,) = httpx.get(f"{url}/api/workspaces", headers=human).json()
    event = httpx.post(f"{url}/api/events", headers=human, json={"name": "deploy_done", "description": "d"}).json()
    subscribed = httpx.post(
        f"{url}/api/workspaces/{workspace['id']}/subscriptions",
        headers=human,
        json={"eventId": event["id"], "title": "Smoke-test production", "body": "Run the smoke tests."},
    )
    assert subscribed.status_code == 201, subscribed.text
    async with mcp_client(url, env["WORKSPACE_DEV_AGENT_TOKEN"]) as client:
        published = await client.call_tool(
            "workspace", {"action": "publishEvent", "payload": {"name": "deploy_done", "payload": "v1 is live"}}
        )
    assert text_of(published) == 'event "deploy_done" published'
    deadline = time.monotonic() + 15
    while True:
        tasks = httpx.get(f"{url}/api/workspaces/{workspace['id']}/tasks", headers=human).json()["tasks"]
        if tasks or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    (trigger,) = tasks
    assert trigger["title"] == "Smoke-test production" and trigger["createdBy"] == "event"
    assert "v1 is live" in trigger["body"]
