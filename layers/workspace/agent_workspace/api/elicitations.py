"""Human REST API: the agents' open questions, and answering them."""

from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.services import accounts, elicitations

router = APIRouter(prefix="/api/workspaces/{workspace_id}/elicitations", tags=["elicitations"])


class ElicitationOut(BaseModel):
    id: str
    taskId: str
    message: str
    mode: Literal["form", "url"]
    requestedSchema: dict[str, Any] | None
    url: str | None
    status: Literal["pending", "answered", "expired"]
    createdAt: str
    expiresAt: str


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Literal["accept", "decline", "cancel"] = Field(
        description="accept (with content for a form), decline or cancel"
    )
    content: dict[str, Any] | None = Field(None, description="Form answers; must match the question's requestedSchema")


class AnswerOut(BaseModel):
    id: str
    taskId: str
    answer: dict[str, Any]


@router.get("", response_model=list[ElicitationOut])
def list_questions(
    workspace_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    status: Literal["pending", "answered", "expired"] | None = Query(None, description="Only questions in this state"),
) -> list[dict]:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return elicitations.open_questions(rt, workspace_id, status)


@router.post("/{elicitation_id}/answer", response_model=AnswerOut)
def answer_question(workspace_id: str, elicitation_id: str, body: AnswerIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """The waiting agent receives exactly this answer. 422 if it does not fit the question, 409 if it is closed."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return elicitations.answer(rt, workspace_id, elicitation_id, body.action, body.content)
