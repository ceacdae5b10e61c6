"""FastAPI dependencies: the runtime, and the human principal behind a request."""

from typing import Annotated

from fastapi import Depends, Request

from agent_workspace.api.auth import authenticate
from agent_workspace.domain.models import Principal
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.runtime import Runtime


def runtime(request: Request) -> Runtime:
    return request.app.state.runtime


def human(request: Request, rt: Annotated[Runtime, Depends(runtime)]) -> Principal:
    return authenticate(rt, request.headers, TokenKind.HUMAN)


RuntimeDep = Annotated[Runtime, Depends(runtime)]
HumanDep = Annotated[Principal, Depends(human)]
