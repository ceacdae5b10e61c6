"""The SDK's own client against the app under uvicorn, for both protocol generations."""

import json

import pytest

from tests.support import TOOL_NAMES, mcp_client, text_of


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_agent_lists_tools_and_gets_its_workspace(live, seeded, mode):
    async with mcp_client(live.url, seeded.agent_token, mode=mode) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == TOOL_NAMES
        result = await client.call_tool("workspace", {"action": "get"})
    assert result.is_error is False
    body = json.loads(text_of(result))
    assert body["id"] == seeded.workspace_id
    assert body["title"] == "Local workspace"
    assert body["taskCounts"] == {"notstarted": 0, "ongoing": 0, "blocked": 0, "completed": 0, "rejected": 0}
