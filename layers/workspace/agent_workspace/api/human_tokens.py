"""Human REST API: the account's own human tokens, so a leaked one can be revoked."""

from fastapi import APIRouter, Response, status
from pydantic import BaseModel, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.services import accounts

router = APIRouter(prefix="/api/tokens", tags=["tokens"], responses=problem_responses(401, 403, 404))


class HumanTokenOut(BaseModel):
    id: str
    createdAt: str
    current: bool = Field(description="Whether this request was made with this token.")


class CreatedHumanToken(BaseModel):
    id: str
    createdAt: str
    humanToken: str = Field(description="Shown once; only its hash is stored.")


@router.get("", response_model=list[HumanTokenOut])
def list_human_tokens(human: HumanDep, rt: RuntimeDep) -> list[dict]:
    return [
        {"id": t.id, "createdAt": t.created_at, "current": t.id == human.token_id}
        for t in rt.accounts.list_tokens(human.account_id, None)
    ]


@router.post(
    "", status_code=status.HTTP_201_CREATED, response_model=CreatedHumanToken, responses=problem_responses(409)
)
def mint_human_token(human: HumanDep, rt: RuntimeDep) -> dict:
    """Mint another human token; 409 once the account holds its cap of live human tokens."""
    token = accounts.issue_token(rt.accounts, TokenKind.HUMAN, human.account_id, None)
    return {"id": token.record.id, "createdAt": token.record.created_at, "humanToken": token.token}


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT, responses=problem_responses(409))
def revoke_human_token(token_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """Revoke a human token of this account (the one in use too); its next use gets 401. The account's last
    human token is refused (409): nobody could administer the account any more."""
    rt.accounts.revoke_token(human.account_id, None, token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
