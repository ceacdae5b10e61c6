"""The human's side of sign-in: the consent page's questions and answers, and the workspace's connected apps."""

import secrets
from datetime import UTC, datetime
from typing import Any

from mcp.server.auth.provider import construct_redirect_uri

from agent_workspace.domain import oauth
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict, NotFound, PayloadError
from agent_workspace.domain.ids import new_id
from agent_workspace.domain.models import Principal
from agent_workspace.domain.text import echo
from agent_workspace.domain.tokens import hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services import accounts

_GONE = "this sign-in request is unknown, expired or decided already; start the sign-in again from the app"


def _now(runtime: Runtime) -> int:
    return int(runtime.clock().timestamp())


def _pending(runtime: Runtime, request_id: str) -> dict[str, Any]:
    request = runtime.oauth.get_request(request_id, _now(runtime)) if len(request_id) <= 64 else None
    if request is None:
        raise NotFound(_GONE)
    return request


def describe(runtime: Runtime, human: Principal, request_id: str) -> dict[str, Any]:
    """What the consent page shows: who asks, for what, and the workspaces the human may pick from."""
    request = _pending(runtime, request_id)
    workspaces = runtime.accounts.list_workspaces(human.account_id)
    return {
        "id": request_id,
        "client": {
            "id": request["clientId"],
            "name": request["clientName"],
            "uri": request.get("clientUri"),
            "redirectUri": request["redirectUri"],
            "redirectHost": request["redirectHost"],
            "verified": bool(request["verified"]),
            "registration": request["registration"],
        },
        "scopes": request["scopes"],
        "scopeTexts": {scope: oauth.SCOPE_TEXTS[scope] for scope in request["scopes"] if scope in oauth.SCOPE_TEXTS},
        "workspaces": [{"id": w.id, "title": w.title} for w in workspaces],
        "expiresAt": iso(datetime.fromtimestamp(int(request["expiresAt"]), UTC)),
    }


def decide(
    runtime: Runtime, human: Principal, request_id: str, allow: bool, workspace_id: str | None, issuer: str
) -> str:
    """Record the human's answer once and say where the browser goes: the app's redirect URI with a code (allow)
    or `access_denied` (deny), its `state` and this server's `iss` (RFC 9207) either way."""
    request = _pending(runtime, request_id)
    now = _now(runtime)
    redirect = request["redirectUri"]
    if not allow:
        runtime.oauth.decide(request_id, now, None)
        return construct_redirect_uri(
            redirect,
            error="access_denied",
            error_description="the person declined the sign-in",
            state=request.get("state"),
            iss=issuer,
        )
    if not workspace_id:
        raise PayloadError("workspaceId: pick the workspace the app will work in", "workspaceId")
    held = runtime.oauth.grant_count(human.account_id, workspace_id)
    if held is None:
        raise NotFound(f"no workspace {workspace_id} in this account")
    if held >= oauth.GRANTS_PER_WORKSPACE:
        raise Conflict(
            f"workspace {workspace_id} has {held} connected apps, the most it may have "
            f"({oauth.GRANTS_PER_WORKSPACE}); revoke one under the workspace's connected apps first"
        )
    code = secrets.token_urlsafe(32)
    grant = {
        "id": new_id(),
        "accountId": human.account_id,
        "workspaceId": workspace_id,
        "clientId": request["clientId"],
        "clientName": request["clientName"],
        "redirectHost": request["redirectHost"],
        "verified": bool(request["verified"]),
        "registration": request["registration"],
        "scopes": request["scopes"],
        "approvedBy": human.token_id,
    }
    values = {
        key: request[key] for key in ("clientId", "redirectUri", "redirectExplicit", "challenge", "scopes", "resource")
    } | {
        "accountId": human.account_id,
        "workspaceId": workspace_id,
        "grantId": grant["id"],
        "grant": grant,
        "expiresAt": now + oauth.CODE_SECONDS,
    }
    runtime.oauth.decide(request_id, now, (hash_token(code), values))
    return construct_redirect_uri(redirect, code=code, state=request.get("state"), iss=issuer)


def connected_apps(runtime: Runtime, human: Principal, workspace_id: str) -> list[dict[str, Any]]:
    accounts.owned_workspace(runtime.accounts, human.account_id, workspace_id)
    apps = []
    for grant in runtime.oauth.list_grants(human.account_id, workspace_id):
        used = [grant[k] for k in ("refreshedAt",) if grant.get(k)]
        if "lastUsedWindow" in grant:
            used.append(grant["lastUsedWindow"] * 60)
        apps.append(
            {
                "id": grant["id"],
                "clientId": grant["clientId"],
                "clientName": grant["clientName"],
                "redirectHost": grant["redirectHost"],
                "verified": bool(grant["verified"]),
                "scopes": grant["scopes"],
                "connectedAt": grant["createdAt"],
                "lastUsedAt": iso(datetime.fromtimestamp(max(used), UTC)) if used else None,
            }
        )
    return apps


def disconnect(runtime: Runtime, human: Principal, workspace_id: str, grant_id: str) -> None:
    accounts.owned_workspace(runtime.accounts, human.account_id, workspace_id)
    if runtime.oauth.revoke_grant(human.account_id, workspace_id, grant_id) is None:
        raise NotFound(f"no connected app {echo(grant_id)} in workspace {workspace_id}")
