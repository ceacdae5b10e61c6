"""What the `memory` tool answers."""

from agent_workspace.tool_registry import Answer


class MemoryAnswer(Answer):
    """A memory as load reads it, current or an earlier revision."""

    name: str
    uri: str
    revision: int
    updatedAt: str
    content: str
