"""What the `board` tool answers."""

from agent_workspace.tool_registry import Answer


class WorkspaceSummary(Answer):
    """The workspace the board belongs to."""

    id: str
    title: str
    mission: str
    createdAt: str


class Column(Answer):
    """A column of the board and the status it belongs to."""

    column: str
    status: str
    meaning: str


class Listed(Answer):
    """A project or an epic as the context lists it: its description is read on its own."""

    id: str
    title: str


class ProjectSummary(Answer):
    """A project as the context lists it and createProject answers it."""

    id: str
    title: str
    description: str


class Epic(Answer):
    """An epic as createEpic and epic answer it."""

    id: str
    title: str
    description: str
    createdAt: str


class Cycle(Answer):
    """A cycle: a time-box with a goal."""

    id: str
    title: str
    goal: str
    endDate: str | None
    active: bool
    createdAt: str


class Policy(Answer):
    """How agents work here, set by the human."""

    supervised: bool
    signOff: bool


class BoardContext(Answer):
    """The board at a glance: its columns, vocabularies, projects, epics, active cycle and policy."""

    workspace: WorkspaceSummary
    statuses: list[str]
    columns: list[Column]
    archived: str
    labels: list[str]
    complexity: list[str]
    priorities: list[str]
    linkTypes: list[str]
    projects: list[Listed]
    epics: list[Listed]
    activeCycle: Cycle | None
    policy: Policy


class ProjectContext(Answer):
    """One project in depth: its memory, conventions and decisions."""

    id: str
    title: str
    description: str
    memory: str
    conventions: str
    decisions: str
    revision: int
    createdAt: str
    updatedAt: str
