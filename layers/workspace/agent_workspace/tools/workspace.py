"""The `workspace` tool: this workspace, and (with the events issue) publishing its events."""

from agent_workspace.mcp_server.registry import Action, Call, NoPayload, Tool
from agent_workspace.services.accounts import workspace_of


def get(call: Call, payload: NoPayload) -> dict:
    workspace = workspace_of(call.runtime.accounts, call.principal)
    return {
        "id": workspace.id,
        "title": workspace.title,
        "mission": workspace.mission,
        "taskCounts": workspace.task_counts,
    }


TOOL = Tool(
    name="workspace",
    summary="This workspace, and publishing its events.",
    actions=(
        Action(
            name="get",
            summary="Get this workspace's title, mission description and task counts by status.",
            payload=NoPayload,
            handler=get,
            read_only=True,
        ),
    ),
)
