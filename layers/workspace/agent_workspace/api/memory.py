"""Human REST API: reading the workspace's memory (agents write it)."""

from fastapi import APIRouter
from pydantic import BaseModel

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.errors import NotFound
from agent_workspace.services import accounts, memory

router = APIRouter(
    prefix="/api/workspaces/{workspace_id}/memory", tags=["memory"], responses=problem_responses(401, 403, 404, 422)
)


class MemorySummary(BaseModel):
    name: str
    uri: str
    revision: int
    updatedAt: str
    size: int


class MemoryOut(BaseModel):
    name: str
    uri: str
    revision: int
    updatedAt: str
    content: str


@router.get("", response_model=list[MemorySummary])
def list_memory(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> list[dict]:
    """Every memory of the workspace, MEMORY.md (the index) among them."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return memory.list_memories(rt, workspace_id)


@router.get("/{name}", response_model=MemoryOut)
def read_memory(workspace_id: str, name: str, human: HumanDep, rt: RuntimeDep, revision: int | None = None) -> dict:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    found = memory.load(rt, workspace_id, name, revision)
    if isinstance(found, str):
        raise NotFound(f"nothing is saved in memory://{name}")
    return found
