"""The channel protocol a Claude Code bridge speaks with an agent token (issue 19), and the human's permission
decisions.

1. `GET /api/channel/events?cursor=…&wait=20`: long-poll what the agent should hear (a new task, a human's
   reply or answer, a task reopened or assigned to it, an event-triggered task, a permission verdict), after the
   cursor it last received; without one, the last day's. Keep the returned cursor: a restarted bridge resumes.
2. `POST /api/channel/permissions` with Claude Code's permission request: a question for the human (201), or the
   verdict at once (200) when the human always allows that tool in this workspace. The verdict arrives as a
   `permission` event, on the channel of the token that asked only.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep, human_actor, runtime
from agent_workspace.api.errors import problem_responses
from agent_workspace.blocking import invocation_deadline
from agent_workspace.config import BRIDGE_POLL_MAX_SECONDS
from agent_workspace.domain import channel as rules
from agent_workspace.domain import oauth
from agent_workspace.domain.errors import Forbidden
from agent_workspace.domain.models import Actor, Principal
from agent_workspace.domain.tokens import TokenKind
from agent_workspace.runtime import Runtime
from agent_workspace.services import channel
from agent_workspace.web.auth import authenticate

router = APIRouter(tags=["channel"], responses=problem_responses(401, 403, 404, 409, 422, 503))


def agent(request: Request, rt: Annotated[Runtime, Depends(runtime)]) -> Principal:
    """An agent token; a signed-in app's only within its scopes (reading events needs read, asking needs write)."""
    principal = authenticate(rt, request.headers, TokenKind.AGENT)
    refusal = oauth.scope_refusal(principal.scopes, oauth.READ if request.method == "GET" else oauth.WRITE)
    if refusal:
        raise Forbidden(refusal)
    return principal


AgentDep = Annotated[Principal, Depends(agent)]


class EventOut(BaseModel):
    id: str
    kind: str = Field(description=", ".join(rules.EVENT_KINDS))
    taskId: str | None
    content: str
    meta: dict[str, str] = Field(description="The notification's meta: chat_id (the task id) and kind, or for a "
                                 "permission verdict request_id and behavior.")  # fmt: skip
    at: str


class EventsOut(BaseModel):
    events: list[EventOut]
    cursor: str = Field(description="Pass it back to hear only what comes after.")


class PermissionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    requestId: str = Field(json_schema_extra={"maxLength": rules.REQUEST_ID_MAX})
    toolName: str = Field(json_schema_extra={"maxLength": rules.TOOL_NAME_MAX})
    description: str = ""
    inputPreview: str = ""
    taskId: str | None = None


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    decision: Literal["allow", "deny", "always"] = Field(
        description="allow, deny, or always (allow this tool in this workspace from now on)"
    )


@router.get("/api/channel/events", response_model=EventsOut)
async def events(
    request: Request,
    principal: AgentDep,
    rt: RuntimeDep,
    cursor: str | None = None,
    wait: Annotated[float, Query(ge=0, le=BRIDGE_POLL_MAX_SECONDS)] = 0,
) -> dict[str, Any]:
    """What the agent should hear after `cursor`, waiting up to `wait` seconds when nothing is new."""
    return await channel.events(rt, Actor.of(principal), cursor, wait, invocation_deadline(request.scope))


@router.post("/api/channel/permissions", status_code=status.HTTP_201_CREATED)
def ask(payload: PermissionIn, principal: AgentDep, rt: RuntimeDep, response: Response) -> dict[str, Any]:
    """Claude Code asks to use a tool: the human decides, unless they always allow it here (then 200, allowed).
    The verdict goes to this token's bridge alone; a requestId already pending for this token is refused (409)."""
    p = payload
    answer, at_once = channel.ask_permission(
        rt, Actor.of(principal), p.requestId, p.toolName, p.description, p.inputPreview, p.taskId
    )
    if at_once:
        response.status_code = status.HTTP_200_OK
    return answer


@router.get("/api/workspaces/{workspace_id}/permissions")
def questions(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """Claude Code's permission requests the bridge relayed, newest last (they expire after 10 minutes)."""
    actor = human_actor(rt, human, workspace_id)
    return {"permissions": channel.questions(rt, actor.workspace_id)}


@router.post("/api/workspaces/{workspace_id}/permissions/{question_id}")
def decide(workspace_id: str, question_id: str, payload: DecisionIn, human: HumanDep, rt: RuntimeDep) -> dict:
    actor = human_actor(rt, human, workspace_id)
    return channel.decide(rt, actor.workspace_id, question_id, payload.decision)


@router.get("/api/workspaces/{workspace_id}/permission-rules")
def permission_rules(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    """The tools the human always allows in this workspace."""
    actor = human_actor(rt, human, workspace_id)
    return {"rules": channel.rules_of(rt, actor.workspace_id)}


@router.delete("/api/workspaces/{workspace_id}/permission-rules/{tool}")
def drop_rule(workspace_id: str, tool: str, human: HumanDep, rt: RuntimeDep) -> dict[str, Any]:
    actor = human_actor(rt, human, workspace_id)
    return channel.drop_rule(rt, actor.workspace_id, tool)
