"""Human REST API: the board's workspace level (context, policy, projects, epics) of a workspace of the account."""

from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep, human_actor
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.text import BODY_MAX, TITLE_MAX
from agent_workspace.services import accounts, board

router = APIRouter(
    prefix="/api/workspaces/{workspace_id}", tags=["board"], responses=problem_responses(401, 403, 404, 422)
)


class PolicyIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    supervised: bool | None = Field(
        None, description="Agents' top-level tasks land in triage for you to accept or decline; left out: unchanged."
    )
    signOff: bool | None = Field(None, description="A delivery waits in review for your approval; left out: unchanged.")


class PolicyOut(BaseModel):
    supervised: bool
    signOff: bool


class HeadingIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str = Field(description="One line of plain text.", json_schema_extra={"maxLength": TITLE_MAX})
    description: str = Field("", description="Optional markdown.", json_schema_extra={"maxLength": BODY_MAX})


@router.get("/board")
def get_board(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """The board at a glance, as an agent's `board context` shows it: columns, vocabularies, projects, epics,
    the active cycle and the policy."""
    return board.context(rt, accounts.owned_workspace(rt.accounts, human.account_id, workspace_id))


@router.put("/board/policy", response_model=PolicyOut)
def set_policy(workspace_id: str, payload: PolicyIn, human: HumanDep, rt: RuntimeDep) -> dict[str, bool]:
    """Set how agents work here: supervised authoring and sign-off on delivery (both off by default)."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return board.set_policy(rt, workspace_id, payload.supervised, payload.signOff).public()


@router.post("/projects", status_code=201, responses=problem_responses(409))
def create_project(workspace_id: str, payload: HeadingIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Create a project; 409 past the workspace's cap (docs/security.md)."""
    return board.create_project(rt, human_actor(rt, human, workspace_id), payload.title, payload.description).summary()


@router.get("/projects/{project_id}")
def get_project(workspace_id: str, project_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """One project with its memory, conventions and decisions."""
    return board.project_context(rt, human_actor(rt, human, workspace_id), project_id)


class ProjectEdit(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    expectedRevision: int = Field(description="The revision you read; a save by someone else since is a 409.")
    title: str | None = Field(None, json_schema_extra={"maxLength": TITLE_MAX})
    description: str | None = Field(None, json_schema_extra={"maxLength": BODY_MAX})
    memory: str | None = Field(None, description="What agents should remember here (markdown), replaced whole.")
    conventions: str | None = Field(None, description="How work is done here (markdown), replaced whole.")
    decisions: str | None = Field(None, description="What was decided and why (markdown), replaced whole.")


@router.patch("/projects/{project_id}", responses=problem_responses(409))
def update_project(
    workspace_id: str, project_id: str, payload: ProjectEdit, human: HumanDep, rt: RuntimeDep
) -> dict[str, Any]:
    """Edit a project's title, description, memory, conventions or decisions; the fields left out keep their text."""
    changes = payload.model_dump(exclude={"expectedRevision"}, exclude_none=True)
    actor = human_actor(rt, human, workspace_id)
    return board.update_project(rt, actor, project_id, payload.expectedRevision, changes).context()


@router.delete("/projects/{project_id}", status_code=204)
def delete_project(workspace_id: str, project_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Delete a project and its texts; its tasks keep the id they carry, and no new task may name it."""
    board.delete_project(rt, human_actor(rt, human, workspace_id), project_id)
    return Response(status_code=204)


@router.post("/epics", status_code=201, responses=problem_responses(409))
def create_epic(workspace_id: str, payload: HeadingIn, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Create an epic; 409 past the workspace's cap (docs/security.md)."""
    return board.create_epic(rt, human_actor(rt, human, workspace_id), payload.title, payload.description).public()


class EpicEdit(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str | None = Field(None, json_schema_extra={"maxLength": TITLE_MAX})
    description: str | None = Field(None, json_schema_extra={"maxLength": BODY_MAX})


@router.get("/epics/{epic_id}")
def get_epic(workspace_id: str, epic_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """One epic with its description (the board lists epics by id and title)."""
    return board.epic(rt, human_actor(rt, human, workspace_id), epic_id).public()


@router.patch("/epics/{epic_id}")
def update_epic(workspace_id: str, epic_id: str, payload: EpicEdit, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Edit an epic's title or description; a field left out keeps its text."""
    actor = human_actor(rt, human, workspace_id)
    return board.update_epic(rt, actor, epic_id, payload.title, payload.description).public()


@router.delete("/epics/{epic_id}", status_code=204)
def delete_epic(workspace_id: str, epic_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Delete an epic; its tasks keep the id they carry, and no new task may name it."""
    board.delete_epic(rt, human_actor(rt, human, workspace_id), epic_id)
    return Response(status_code=204)
