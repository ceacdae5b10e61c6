"""Human REST API: the account's workspaces and their agent tokens."""

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts

router = APIRouter(prefix="/api/workspaces", tags=["workspaces"])


class WorkspaceIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    title: str = Field(min_length=1, max_length=accounts.TITLE_MAX)
    mission: str = Field("", max_length=accounts.MISSION_MAX)


class WorkspaceOut(BaseModel):
    id: str
    title: str
    mission: str
    createdAt: str


class WorkspaceDetail(WorkspaceOut):
    taskCounts: dict[str, int]


class CreatedWorkspace(WorkspaceOut):
    agentToken: str = Field(description="Shown once; only its hash is stored.")
    tokenId: str


class TokenOut(BaseModel):
    id: str
    createdAt: str


class CreatedToken(TokenOut):
    agentToken: str = Field(description="Shown once; only its hash is stored.")


@router.get("", response_model=list[WorkspaceOut])
def list_workspaces(human: HumanDep, rt: RuntimeDep) -> list[dict]:
    return [w.summary() for w in rt.accounts.list_workspaces(human.account_id)]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=CreatedWorkspace, responses=problem_responses(409))
def create_workspace(body: WorkspaceIn, human: HumanDep, rt: RuntimeDep) -> dict:
    workspace, token = accounts.create_workspace(rt.accounts, human.account_id, body.title, body.mission)
    return {**workspace.summary(), "agentToken": token.token, "tokenId": token.record.id}


@router.get("/{workspace_id}", response_model=WorkspaceDetail)
def get_workspace(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    workspace = accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return {**workspace.summary(), "taskCounts": workspace.task_counts}


@router.get("/{workspace_id}/tokens", response_model=list[TokenOut])
def list_tokens(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> list[dict]:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return [{"id": t.id, "createdAt": t.created_at} for t in rt.accounts.list_tokens(human.account_id, workspace_id)]


@router.post(
    "/{workspace_id}/tokens",
    status_code=status.HTTP_201_CREATED,
    response_model=CreatedToken,
    responses=problem_responses(409),
)
def mint_token(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """Mint another agent token; 409 once the workspace holds its cap of live agent tokens."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    token = accounts.issue_token(rt.accounts, TokenKind.AGENT, human.account_id, workspace_id)
    return {"id": token.record.id, "createdAt": token.record.created_at, "agentToken": token.token}


@router.delete("/{workspace_id}/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(workspace_id: str, token_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    rt.accounts.revoke_token(human.account_id, workspace_id, token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
