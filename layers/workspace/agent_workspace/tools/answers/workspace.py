"""What the `workspace` tool answers."""

from agent_workspace.tool_registry import Answer


class WorkspaceAnswer(Answer):
    """This workspace, with its task counts by status (every status, 0 included)."""

    id: str
    title: str
    mission: str
    taskCounts: dict[str, int]
