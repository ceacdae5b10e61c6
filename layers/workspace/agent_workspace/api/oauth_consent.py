"""Human REST API of sign-in: the consent page's two calls, and each workspace's connected apps.

The consent page sends the human token in the Authorization header like every console call, and the server sets
no cookie, so another site cannot make a signed-in browser approve anything (no CSRF): it cannot add that header.
"""

from typing import Literal

from fastapi import APIRouter, Request, Response, status
from pydantic import BaseModel, ConfigDict, Field

from agent_workspace.api.deps import HumanDep, RuntimeDep
from agent_workspace.api.errors import problem_responses
from agent_workspace.services import oauth_consent
from agent_workspace.web.auth import base_url

router = APIRouter(tags=["sign-in"], responses=problem_responses(401, 403, 404))


class ClientOut(BaseModel):
    id: str
    name: str
    uri: str | None
    redirectUri: str
    redirectHost: str
    verified: bool = Field(description="False where the name and redirect were asserted by the app itself.")
    registration: Literal["metadata-document", "dynamic"]


class WorkspaceChoice(BaseModel):
    id: str
    title: str


class SignInRequestOut(BaseModel):
    id: str
    client: ClientOut
    scopes: list[str]
    scopeTexts: dict[str, str]
    workspaces: list[WorkspaceChoice]
    expiresAt: str


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["allow", "deny"]
    workspaceId: str | None = Field(None, max_length=64, description="The workspace the app works in (allow only).")


class DecisionOut(BaseModel):
    redirectTo: str = Field(description="Where the browser goes next: the app's redirect URI with the answer.")


class ConnectedApp(BaseModel):
    id: str
    clientId: str
    clientName: str
    redirectHost: str
    verified: bool
    scopes: list[str]
    connectedAt: str
    lastUsedAt: str | None


class ConnectedApps(BaseModel):
    items: list[ConnectedApp]


@router.get("/api/oauth/requests/{request_id}", response_model=SignInRequestOut)
def sign_in_request(request_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """An app's pending sign-in, for the consent page; 404 once expired or decided."""
    return oauth_consent.describe(rt, human, request_id)


@router.post("/api/oauth/requests/{request_id}", response_model=DecisionOut, responses=problem_responses(409, 422))
def decide_sign_in(request_id: str, body: Decision, human: HumanDep, rt: RuntimeDep, request: Request) -> dict:
    """Allow (into one workspace of this account) or deny an app's sign-in, once."""
    target = oauth_consent.decide(
        rt, human, request_id, body.decision == "allow", body.workspaceId, base_url(rt, request)
    )
    return {"redirectTo": target}


@router.get("/api/workspaces/{workspace_id}/connected-apps", response_model=ConnectedApps)
def list_connected_apps(workspace_id: str, human: HumanDep, rt: RuntimeDep) -> dict:
    """The apps signed in to this workspace, with when each connected and was last used."""
    return {"items": oauth_consent.connected_apps(rt, human, workspace_id)}


@router.delete("/api/workspaces/{workspace_id}/connected-apps/{grant_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_connected_app(workspace_id: str, grant_id: str, human: HumanDep, rt: RuntimeDep) -> Response:
    """End an app's sign-in at once: its access and refresh tokens stop working."""
    oauth_consent.disconnect(rt, human, workspace_id, grant_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
