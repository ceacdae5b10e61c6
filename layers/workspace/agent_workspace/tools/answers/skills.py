"""What the `skills` tool answers."""

from agent_workspace.tool_registry import Answer


class SkillHit(Answer):
    """A skill that search found; readOnly (true) when it is shared into this workspace from another."""

    name: str
    uri: str
    description: str
    readOnly: bool | None = None


class SkillSearch(Answer):
    """The skills search found."""

    skills: list[SkillHit]


class SkillFileAnswer(Answer):
    """One file of a skill as load reads it; files (the other files' URIs) only for its SKILL.md."""

    uri: str
    content: str
    files: list[str] | None = None
    readOnly: bool | None = None
