"""The board over a workspace's tasks: its columns, vocabularies, policy, projects and epics.

The board refines AgentRQ's five statuses rather than replacing them: each column belongs to one status,
so `updateStatus`, `taskCounts` and the queue mean what they always meant.
"""

from dataclasses import dataclass
from typing import Any

from agent_workspace.domain.tasks import BODY_MAX, STORED, TITLE_MAX, check_text

# (column, the AgentRQ status it belongs to, what it means); `archived` is a flag over any of them.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("triage", "notstarted", "proposed by an agent under a supervised policy; the human accepts or declines it"),
    ("backlog", "notstarted", "accepted, not yet ready; workable once it has acceptance criteria"),
    ("ready", "notstarted", "ready to be claimed"),
    ("in_progress", "ongoing", "claimed and being worked on"),
    ("blocked", "blocked", "waiting on the human's answers"),
    ("in_review", "completed", "delivered; awaiting the human's sign-off (policy signOff)"),
    ("done", "completed", "delivered and accepted"),
    ("rejected", "rejected", "declined or abandoned"),
)
ARCHIVED_NOTE = "archived: any column, hidden from lists unless asked for, with the reason it was archived"
COMPLEXITY = ("trivial", "small", "medium", "large", "unknown")
PRIORITIES = ("urgent", "high", "medium", "low", "none")
LINK_TYPES = ("blocks", "relates_to", "duplicate_of")

PROJECTS_MAX = 100  # per workspace: the context lists them all in one answer
EPICS_MAX = 500
PROJECT_DOC_MAX = BODY_MAX  # memory, conventions and decisions, each


@dataclass(frozen=True)
class Policy:
    """How agents work here, set by the human; the defaults keep AgentRQ's behaviour exactly."""

    __pydantic_config__ = STORED

    supervised: bool = False  # an agent's top-level tasks land in triage for the human to accept
    sign_off: bool = False  # a delivery waits in review for the human's approval

    def public(self) -> dict[str, bool]:
        return {"supervised": self.supervised, "signOff": self.sign_off}


@dataclass(frozen=True)
class _Heading:
    """What projects and epics share: a titled, described thing on the board, and who made it when."""

    __pydantic_config__ = STORED

    id: str
    workspace_id: str
    title: str
    description: str
    created_at: str
    created_by: str


@dataclass(frozen=True)
class Project(_Heading):
    updated_at: str = ""
    memory: str = ""
    conventions: str = ""
    decisions: str = ""
    revision: int = 1

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description}

    def context(self) -> dict[str, Any]:
        """What an agent reads before working in the project: its memory, conventions and decisions."""
        return {
            **self.summary(),
            "memory": self.memory,
            "conventions": self.conventions,
            "decisions": self.decisions,
            "revision": self.revision,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True)
class Epic(_Heading):
    def public(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "description": self.description, "createdAt": self.created_at}


def columns_table() -> list[dict[str, str]]:
    return [{"column": name, "status": status, "meaning": meaning} for name, status, meaning in COLUMNS]


def check_heading(title: str, description: str) -> None:
    """A project's or epic's title (one line of plain text) and description, bounded like a task's."""
    check_text(title, "title", TITLE_MAX, plain=True)
    check_text(description, "description", BODY_MAX, required=False)
