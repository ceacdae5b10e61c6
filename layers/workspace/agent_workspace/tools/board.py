"""The `board` tool: the workspace and project level of the task board (Masaro's context, projects, epics)."""

from pydantic import Field

from agent_workspace.domain.board import EPICS_MAX, PROJECTS_MAX
from agent_workspace.domain.models import Actor
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import board
from agent_workspace.services.accounts import workspace_of
from agent_workspace.tool_registry import Action, Call, NoPayload, Payload, Tool
from agent_workspace.tools.answers.board import BoardContext, Epic, ProjectContext, ProjectSummary

_TITLE = Field(description=f"One line of plain text, at most {TITLE_MAX} characters")
_DESCRIPTION = Field("", description=f"Optional markdown, at most {BODY_MAX // 1024} KiB")


class ProjectPayload(Payload):
    projectId: str = Field(description="The project, as the context lists it")


class EpicPayload(Payload):
    epicId: str = Field(description="The epic, as the context lists it")


class CreatePayload(Payload):
    title: str = _TITLE
    description: str = _DESCRIPTION


def context(call: Call, payload: NoPayload) -> dict:
    return board.context(call.runtime, workspace_of(call.runtime.accounts, call.principal))


def project(call: Call, payload: ProjectPayload) -> dict:
    return board.project_context(call.runtime, Actor.of(call.principal), payload.projectId)


def epic(call: Call, payload: EpicPayload) -> dict:
    return board.epic(call.runtime, Actor.of(call.principal), payload.epicId).public()


def create_project(call: Call, payload: CreatePayload) -> dict:
    return board.create_project(call.runtime, Actor.of(call.principal), payload.title, payload.description).summary()


def create_epic(call: Call, payload: CreatePayload) -> dict:
    return board.create_epic(call.runtime, Actor.of(call.principal), payload.title, payload.description).public()


TOOL = Tool(
    name="board",
    title="Task board",
    summary="The task board's workspace level: its columns and vocabularies, projects and epics.",
    actions=(
        Action(
            name="context",
            summary=(
                "The board at a glance: statuses and columns, labels, the complexity and priority vocabularies, "
                "projects and epics (id and title), the active cycle and the workspace policy. The standard first call."
            ),
            payload=NoPayload,
            handler=context,
            read_only=True,
            result=BoardContext,
        ),
        Action(
            name="project",
            summary="One project in depth: its memory, conventions and decisions.",
            payload=ProjectPayload,
            handler=project,
            read_only=True,
            result=ProjectContext,
            example={"projectId": "0kGpezGeuxt"},
        ),
        Action(
            name="epic",
            summary="One epic with its description.",
            payload=EpicPayload,
            handler=epic,
            read_only=True,
            result=Epic,
            example={"epicId": "0kGpezGeuxt"},
        ),
        Action(
            name="createProject",
            summary=f"Create a project to group tasks; at most {PROJECTS_MAX} per workspace.",
            payload=CreatePayload,
            handler=create_project,
            result=ProjectSummary,
            example={"title": "Billing", "description": "Invoices, payments and refunds."},
        ),
        Action(
            name="createEpic",
            summary=f"Create an epic to group related tasks; at most {EPICS_MAX} per workspace.",
            payload=CreatePayload,
            handler=create_epic,
            result=Epic,
            example={"title": "Move checkout to the new API"},
        ),
    ),
)
