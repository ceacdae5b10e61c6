"""Issue 32 on the agent repo: cursors that leave their listing's key range, and writes retried after a timeout.

Reference: ../shared/reference/omr-agent-repo-tools.txt ("list_agent_prompt_versions", "agent_activity": limit,
cursor). AWS's rule: a Query's ExclusiveStartKey must lie in the range the key condition reads (same partition and,
with begins_with, the same sort-key prefix); DynamoDB answers a ValidationException otherwise, which moto lets pass.
"""

import json

import pytest

from agent_workspace.store import keys
from agent_workspace.store.cursor import cursor_after

pytestmark = pytest.mark.anyio


async def ok(client, tool: str, /, **arguments) -> dict:
    text, is_error = await client.raw(tool, arguments)
    assert not is_error, text
    return json.loads(text)


async def refused(client, tool: str, arguments: dict) -> str:
    text, is_error = await client.raw(tool, arguments)
    assert is_error, text
    return text


@pytest.mark.parametrize(
    ("tool", "other_range"),
    [
        ("list_agent_prompt_versions", keys.agent_activity_sk("0kGogHmaqvZ")),
        ("agent_activity", keys.prompt_sk(1)),
        ("agent_activity", keys.AGENT_SK),
    ],
)
async def test_a_cursor_outside_the_listings_key_range_is_refused_by_name(agent, tool, other_range):
    made = await ok(agent, "create_agent", name="Paged", prompt="v1")
    forged = cursor_after({"PK": {"S": keys.agent_pk(made["id"])}, "SK": {"S": other_range}})
    text = await refused(agent, tool, {"agent": made["id"], "cursor": forged})
    assert "cursor is not one this listing returned" in text, text
