"""Human REST API: a workspace's skills, and sharing them with the account's other workspaces.

Agents write skills through the `skills` tool; the human reads them here and decides where they are
shared. Sharing stays within the account: any other account's workspace is a 404.
"""

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.services import accounts, skills

router = APIRouter(
    prefix="/api/workspaces/{workspace_id}/skills",
    tags=["skills"],
    responses=problem_responses(401, 403, 404, 422, 503),
)


class Shown(BaseModel):
    """Documents what a service returns; a field it adds later passes through instead of being dropped."""

    model_config = ConfigDict(extra="allow")


class SkillOut(Shown):
    name: str
    uri: str = Field(description="The skill:// URI of its SKILL.md.")
    description: str = Field(description="The description in its SKILL.md's frontmatter.")
    ownerWorkspaceId: str = Field(description="The workspace that created it, and the only one that changes it.")
    sharedIn: bool = Field(description="Shared into this workspace from its owner: read-only here.")


class SkillDetail(SkillOut):
    sharedWith: list[str] = Field(description="The workspaces it is shared into, besides its owner.")
    content: str = Field(description="Its SKILL.md.")
    files: list[str] = Field(description="The skill:// URIs of its other files.")
    createdAt: str
    updatedAt: str


class SkillFileOut(Shown):
    uri: str
    path: str
    content: str
    updatedAt: str


class ShareIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    workspaceId: str = Field(description="Another workspace of the same account; the skill is read-only there.")


class ShareOut(Shown):
    name: str
    uri: str
    workspaceId: str = Field(description="The workspace it is now shared into.")


@router.get("", response_model=list[SkillOut])
def list_skills(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> list[dict]:
    """The skills the workspace's agents can use, by name: its own and those shared into it."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return skills.list_skills(rt, workspace_id)


@router.get("/{name}", response_model=SkillDetail)
def get_skill(workspace_id: str, name: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """One skill: its SKILL.md, the URIs of its other files, and where it is shared."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return skills.get_skill(rt, workspace_id, name)


@router.get("/{name}/files/{path:path}", response_model=SkillFileOut)
def get_file(workspace_id: str, name: str, path: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """One file of the skill (SKILL.md included)."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return skills.get_file(rt, workspace_id, name, path)


@router.post(
    "/{name}/shares",
    status_code=status.HTTP_201_CREATED,
    response_model=ShareOut,
    responses={200: {"description": "Already shared there; nothing changed."}, **problem_responses(409)},
)
def share(workspace_id: str, name: str, body: ShareIn, human: HumanDep, rt: RuntimeDep, response: Response) -> dict:
    """Share the skill into another workspace of the account, where it is read-only.

    409 if that workspace already has a skill of this name, or the skill already is in as many
    workspaces as one can be; 403 if the skill is itself shared into this workspace.
    """
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    accounts.owned_workspace(rt.accounts, human.account_id, body.workspaceId)
    shared, created = skills.share(rt, workspace_id, name, body.workspaceId)
    if not created:
        response.status_code = status.HTTP_200_OK
    return shared


@router.delete("/{name}/shares/{target_workspace_id}", status_code=status.HTTP_204_NO_CONTENT)
def unshare(workspace_id: str, name: str, target_workspace_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Take the skill out of a workspace it is shared into, as if that workspace deleted it."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    accounts.owned_workspace(rt.accounts, human.account_id, target_workspace_id)
    skills.unshare(rt, workspace_id, name, target_workspace_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
