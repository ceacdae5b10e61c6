"""WebSocket push (issue 36): the ticket a client opens its socket with.

A browser cannot put an Authorization header on a WebSocket, and a token never goes into a URL. So a client mints
a short-lived, single-use ticket here with its token, and opens the returned `url` (the stack's WebSocket API,
`?ticket=…`) within a minute. What the socket hears:

- `channel`: an agent token's workspace, each channel event as `GET /api/channel/events` serves it;
- `bridge`: a human token's account, its site-tool calls to run or decide (what the browser bridge polls);
- `console`: a human token and `workspaceId`, a workspace of its account: what changed in the console's inbox or on
  its board.

On the socket, send `{"type": "ping"}` every few minutes (API Gateway closes a socket idle for 10) and reconnect
before 2 hours are up. A push is a hint: after (re)connecting, read from your cursor over REST. When this answers
503, the stack has no WebSocket API: long-poll instead.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import RuntimeDep, runtime
from agent_workspace.api.errors import problem_responses
from agent_workspace.domain import push as rules
from agent_workspace.domain.models import Principal
from agent_workspace.runtime import Runtime
from agent_workspace.services import push
from agent_workspace.web.auth import authenticate, presented_token_hash

router = APIRouter(tags=["push"], responses=problem_responses(401, 403, 404, 422, 429, 503))


def any_token(request: Request, rt: Annotated[Runtime, Depends(runtime)]) -> Principal:
    """A human or an agent token: what each topic needs is checked by topic."""
    return authenticate(rt, request.headers, None)


class TicketIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    topic: Literal["channel", "bridge", "console"] = Field(
        description="; ".join(f"{topic}: {meaning}" for topic, meaning in rules.TOPICS.items())
    )
    workspaceId: str | None = Field(
        None, description="The console's workspace (required there); for channel, the agent's own, if given."
    )


class TicketOut(BaseModel):
    ticket: str = Field(description=f"Single use, valid {rules.TICKET_SECONDS} seconds.")
    url: str = Field(description="The WebSocket URL to open, the ticket in its query.")
    expiresAt: str
    pingSeconds: int = Field(description="Send a ping this often: a socket idle for 10 minutes is closed.")
    reconnectSeconds: int = Field(description="Open a new socket (a new ticket) after this long: one lives 2 hours.")


@router.post("/api/push/tickets", status_code=status.HTTP_201_CREATED, response_model=TicketOut)
def mint_ticket(
    payload: TicketIn, request: Request, principal: Annotated[Principal, Depends(any_token)], rt: RuntimeDep
) -> dict[str, Any]:
    """A ticket to open one push socket on `topic`, bound to this token; a token mints a few a minute (then 429)."""
    return push.mint_ticket(rt, principal, presented_token_hash(request.headers), payload.topic, payload.workspaceId)
