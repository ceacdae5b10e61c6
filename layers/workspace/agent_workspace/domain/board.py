"""The board over a workspace's tasks: its columns, vocabularies, policy, projects and epics.

The board refines AgentRQ's five statuses rather than replacing them: each column belongs to one status,
so `updateStatus`, `taskCounts` and the queue mean what they always meant.
"""

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from agent_workspace.domain.columns import COLUMNS
from agent_workspace.domain.errors import PayloadError
from agent_workspace.domain.stored import STORED
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX, check_text

ARCHIVED_NOTE = "archived: any column, hidden from lists unless asked for, with the reason it was archived"
# Per workspace. The context lists every project and epic by id and title in one answer (each title at most
# TITLE_MAX characters, some 6 KB as escaped JSON at worst, and the answer goes twice: text and structured), and the
# board's one Query reads their headings and the cycles (each goal at most GOAL_MAX): the largest board answers.
PROJECTS_MAX = 100
EPICS_MAX = 200
CYCLES_MAX = 200
GOAL_MAX = 2000  # a cycle's goal: the board's Query reads every cycle whole
LABELS_MAX = 200  # per workspace; a task carries at most LABELS_PER_TASK
LABELS_PER_TASK = 10
LABEL_MAX = 50
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
class Named:
    """A project or epic as the board lists it: its heading without its texts (they are read on their own)."""

    __pydantic_config__ = STORED

    id: str
    workspace_id: str
    title: str
    created_at: str
    created_by: str

    def listed(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title}


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


@dataclass(frozen=True)
class Cycle(_Heading):
    """A time-box the human plans; one at a time is active, and the queue ranks its tasks first."""

    end_date: str | None = None

    def public(self, active_id: str | None = None) -> dict[str, Any]:
        shown = {"id": self.id, "title": self.title, "goal": self.description, "endDate": self.end_date}
        return shown | {"active": self.id == active_id, "createdAt": self.created_at}


@dataclass(frozen=True)
class Board:
    """The workspace level as one Query reads it, or the part of it a task's write needs (`BoardStore.for_task`)."""

    projects: list[Named] = field(default_factory=list)
    epics: list[Named] = field(default_factory=list)
    cycles: list[Cycle] = field(default_factory=list)
    policy: Policy = Policy()
    labels: tuple[str, ...] = ()
    active_cycle_id: str | None = None

    @property
    def active_cycle(self) -> Cycle | None:
        return next((c for c in self.cycles if c.id == self.active_cycle_id), None)


def columns_table() -> list[dict[str, str]]:
    return [{"column": name, "status": status, "meaning": meaning} for name, status, meaning in COLUMNS]


def check_date(value: str, field_name: str) -> str:
    """A calendar date as YYYY-MM-DD."""
    try:
        if len(value) == 10 and date.fromisoformat(value).isoformat() == value:
            return value
    except ValueError:
        pass
    raise PayloadError(f"{field_name} must be a date such as '2026-12-31'", field=field_name)


def check_heading(title: str, description: str, description_max: int = BODY_MAX, name: str = "description") -> None:
    """A project's, epic's or cycle's title (one line of plain text) and description, bounded like a task's."""
    check_text(title, "title", TITLE_MAX, plain=True)
    check_text(description, name, description_max, required=False)


def heading_of(thing: "_Heading") -> Named:
    return Named(thing.id, thing.workspace_id, thing.title, thing.created_at, thing.created_by)
