"""FastAPI dependencies: the runtime, and the human principal behind a request."""

from typing import Annotated

from fastapi import Depends, Request

from agent_workspace.domain.models import Actor, Principal
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts
from agent_workspace.web.auth import authenticate


def runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def human(request: Request, rt: Annotated[Runtime, Depends(runtime)]) -> Principal:
    return authenticate(rt, request.headers, TokenKind.HUMAN)


RuntimeDep = Annotated[Runtime, Depends(runtime)]
HumanDep = Annotated[Principal, Depends(human)]


def human_actor(rt: Runtime, human: Principal, workspace_id: str) -> Actor:
    """The human acting in one of the account's workspaces; another account's is a 404."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return Actor(kind="human", account_id=human.account_id, workspace_id=workspace_id, token_id=human.token_id)
