"""Human REST API: the browser bridge, and the human's decisions on site-tool calls.

The bridge protocol a Chrome extension (or any client with the human's token) speaks:

1. `PUT /api/bridge/sites` with every shared site and its WebMCP tools, whenever they change and
   at least every 30 seconds: it is the heartbeat that marks the browser online.
2. `GET /api/bridge/calls?wait=20`: long-poll; answers the calls to run now (each handed to one
   poll only) or an empty list after `wait` seconds, or sooner when the server caps polls shorter
   (`WORKSPACE_BRIDGE_POLL_SECONDS`). Polling also marks the browser online.
3. `POST /api/bridge/calls/{id}/result` with `{"result": ...}` or `{"error": "..."}` within the
   call's `deadline` (60 seconds after it became runnable).

Where the stack has push (`POST /api/push/tickets`, topic `bridge`), a browser may hear its calls on a socket
instead of long-polling: each `siteCall` frame with status `queued` says "read `GET /api/bridge/calls?wait=0`
now". While that socket is open the browser counts as online without polling or reporting.

Around it, what the extension's popup shows: the shared sites and the online state (`GET /api/bridge/sites`),
the calls waiting for the human's decision across the account (`GET /api/bridge/pending`), and sign-out
(`DELETE /api/bridge/online`), after which the browser counts as offline at once.
"""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.blocking import invocation_deadline
from agent_workspace.config import BRIDGE_POLL_MAX_SECONDS
from agent_workspace.domain.site_tools import DECISIONS, SITES_MAX, TOOLS_MAX
from agent_workspace.services import accounts, site_tools

router = APIRouter(tags=["site tools"], responses=problem_responses(401, 403, 404, 409, 422, 503))

_WAIT_MAX = BRIDGE_POLL_MAX_SECONDS


class ToolIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    description: str = ""
    inputSchema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    annotations: dict[str, Any] = Field(
        default_factory=dict, description="WebMCP annotations; readOnlyHint: true lets the tool run without asking."
    )


class SiteIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    origin: str = Field(description="The site's origin, e.g. 'https://github.com'.")
    title: str = ""
    tools: list[ToolIn] = Field(default_factory=list, description=f"At most {TOOLS_MAX}.")


class SitesIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    sites: list[SiteIn] = Field(description=f"Every site shared now (at most {SITES_MAX}); others are unshared.")


class SitesReported(BaseModel):
    sites: int
    tools: int
    online: bool


class SharedToolOut(BaseModel):
    name: str
    description: str
    readOnly: bool = Field(description="Runs without asking the human (the page marked it readOnlyHint).")


class SharedSiteOut(BaseModel):
    origin: str
    title: str
    updatedAt: str
    tools: list[SharedToolOut]


class BridgeStateOut(BaseModel):
    online: bool = Field(
        description="The browser polled or reported within the last 45 seconds and did not sign out, or its push "
        "socket (topic bridge) is open."
    )
    lastSeenAt: str | None
    sites: list[SharedSiteOut] = Field(description="Shared with every workspace of the account.")


class CallForBrowser(BaseModel):
    id: str
    site: str
    tool: str
    arguments: dict[str, Any]
    deadline: str = Field(description="Post the result before this; later it is refused (409).")


class CallsForBrowser(BaseModel):
    calls: list[CallForBrowser]


class ResultIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    result: Any = Field(None, description="What the tool returned (any JSON, at most 256 KiB).")
    error: str | None = Field(None, description="Why the tool failed, instead of a result.")

    @model_validator(mode="after")
    def _one_of(self) -> "ResultIn":
        if (self.error is None) == ("result" not in self.model_fields_set):
            raise ValueError("send exactly one of result or error")
        return self


class SiteCallOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    taskId: str
    site: str
    tool: str
    arguments: dict[str, Any]
    status: str = Field(description="pending (needs a decision), queued, running, done, failed, denied or expired.")
    createdAt: str
    updatedAt: str


class PendingCallOut(SiteCallOut):
    workspaceId: str


class PendingCallsOut(BaseModel):
    calls: list[PendingCallOut]


class DecisionIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    decision: Literal[DECISIONS] = Field(  # type: ignore[valid-type]
        description="allow_once, always_allow (remembered for this tool on this site, in this workspace) or deny."
    )


@router.put("/api/bridge/sites", response_model=SitesReported)
def report_sites(payload: SitesIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """The browser's shared sites and their tools, replacing what it reported before; marks it online."""
    return site_tools.report_sites(rt, human.account_id, [site.model_dump() for site in payload.sites])


@router.get("/api/bridge/sites", response_model=BridgeStateOut)
def shared_sites(human: HumanDep, rt: RuntimeDep) -> dict:
    """The sites the browser shares now, their tools, and whether it is connected."""
    return site_tools.bridge_state(rt, human.account_id)


@router.delete("/api/bridge/online", status_code=status.HTTP_204_NO_CONTENT)
def disconnect(human: HumanDep, rt: RuntimeDep) -> Response:
    """The browser signs out: offline at once, so new calls are refused instead of waiting for it."""
    site_tools.disconnect(rt, human.account_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/api/bridge/pending", response_model=PendingCallsOut)
def pending_calls(human: HumanDep, rt: RuntimeDep) -> dict:
    """Calls waiting for the human's decision in any workspace of the account, oldest first (at most 50)."""
    return {"calls": site_tools.pending_calls(rt, human.account_id)}


@router.get("/api/bridge/calls", response_model=CallsForBrowser)
async def poll_calls(
    request: Request,
    human: HumanDep,
    rt: RuntimeDep,
    wait: Annotated[float, Query(ge=0, le=_WAIT_MAX, description=f"Seconds to wait for a call, 0-{_WAIT_MAX}.")] = 20,
) -> dict:
    """Long-poll for calls to run in the browser; each call is handed to one poll only."""
    deadline = invocation_deadline(request.scope)
    return {"calls": await site_tools.poll_calls(rt, human.account_id, human.token_id, wait, deadline)}


@router.post("/api/bridge/calls/{call_id}/result", response_model=SiteCallOut, responses=problem_responses(409))
def post_result(call_id: str, payload: ResultIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """The outcome of a call the browser ran; refused once the call has timed out."""
    return site_tools.post_result(rt, human.account_id, call_id, payload.result, payload.error).public()


@router.get("/api/workspaces/{workspace_id}/site-calls", response_model=list[SiteCallOut])
def list_site_calls(
    workspace_id: str,
    human: HumanDep,
    rt: RuntimeDep,
    status: Annotated[
        Literal["pending", "queued", "running", "done", "failed", "denied", "expired"] | None,
        Query(description="Only calls in this status; pending ones wait for your decision."),
    ] = None,
) -> list[dict]:
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return site_tools.calls_of(rt, workspace_id, status)


@router.post(
    "/api/workspaces/{workspace_id}/site-calls/{call_id}/decision",
    response_model=SiteCallOut,
    responses=problem_responses(409),
)
def decide(workspace_id: str, call_id: str, payload: DecisionIn, human: HumanDep, rt: RuntimeDep) -> dict:
    """Allow once, always allow, or deny a call that waits for you; the agent's call goes on or fails."""
    accounts.owned_workspace(rt.accounts, human.account_id, workspace_id)
    return site_tools.decide(rt, human.account_id, workspace_id, call_id, payload.decision).public()
