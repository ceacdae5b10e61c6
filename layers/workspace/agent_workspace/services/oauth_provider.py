"""The MCP SDK's authorization-server provider, kept in the table: the SDK's handlers call it for every step.

A grant is one connected app in one workspace. Its access token is an agent token of that workspace (the same item
the bearer check reads, with the grant's id as its token id, its scopes and an expiry), so a signed-in app gets
exactly what an agent token gets, and whatever is keyed by token id (sessions, claims, queues, waits) belongs to
the grant and survives a refresh.
"""

import re
import secrets
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from agent_workspace.blocking import run_blocking
from agent_workspace.domain import oauth
from agent_workspace.domain.clock import iso
from agent_workspace.domain.errors import Conflict
from agent_workspace.domain.tokens import TokenKind, hash_token, new_token
from agent_workspace.runtime import Runtime
from agent_workspace.services.oauth_clients import METADATA_DOCUMENT, ClientDirectory, RegisteredClient


@dataclass(frozen=True)
class OAuthRequest:
    """What the SDK's handlers do not pass on: where this server is (its issuer) and who asks (their address)."""

    base_url: str
    source: str
    resource_paths: tuple[str, ...] = ("/mcp",)  # the MCP paths a token may be asked for; the first is the default

    @property
    def resource(self) -> str:
        return f"{self.base_url}{self.resource_paths[0]}"

    def serves(self, resource: str) -> bool:
        return resource.rstrip("/") in {f"{self.base_url}{path}" for path in self.resource_paths}


CURRENT: ContextVar[OAuthRequest] = ContextVar("oauth_request")


_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # RFC 7636 §4.2: BASE64URL(SHA256(verifier)), unpadded


def _text(value: object) -> str | None:
    return str(value) if value is not None else None


class IssuedCode(AuthorizationCode):
    code_hash: str
    account_id: str
    workspace_id: str
    grant_id: str
    used: bool
    grant: dict[str, Any]


class HeldRefresh(RefreshToken):
    token_hash: str
    account_id: str
    workspace_id: str
    grant_id: str
    rotated: bool


class HeldAccess(AccessToken):
    account_id: str
    workspace_id: str
    grant_id: str


class WorkspaceOAuthProvider:
    """`mcp.server.auth.provider.OAuthAuthorizationServerProvider` over this app's table."""

    def __init__(self, runtime: Runtime, directory: ClientDirectory) -> None:
        self._runtime = runtime
        self.directory = directory
        self.last_problem: ContextVar[str | None] = ContextVar("oauth_client_problem", default=None)
        self.last_client: ContextVar[RegisteredClient | None] = ContextVar("oauth_client", default=None)

    def _now(self) -> int:
        return int(self._runtime.clock().timestamp())

    # -- clients -------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> RegisteredClient | None:
        try:
            client = await run_blocking(self.directory.find, client_id, CURRENT.get().source)
        except LookupError as problem:
            self.last_problem.set(str(problem))
            return None
        self.last_client.set(client)
        return client

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        await run_blocking(self.directory.register, client_info)

    # -- authorization ---------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Hold the request for the human and send the browser to the consent page."""
        request = CURRENT.get()
        if params.resource is not None and not request.serves(params.resource):
            raise AuthorizeError(
                "invalid_target", f"resource must be one of this server's MCP URLs, {request.resource}"
            )
        assert isinstance(client, RegisteredClient)
        if not _CHALLENGE.fullmatch(params.code_challenge):
            raise AuthorizeError("invalid_request", "code_challenge must be an S256 challenge: 43 base64url characters")
        if params.state is not None and len(params.state) > oauth.STATE_MAX:
            raise AuthorizeError("invalid_request", f"state is over {oauth.STATE_MAX:,} characters")
        redirect = str(params.redirect_uri)
        request_id = secrets.token_urlsafe(24)
        now = self._now()
        await run_blocking(
            self._runtime.oauth.put_request,
            request_id,
            {
                "clientId": client.client_id,
                "clientName": client.client_name or client.redirect_host(redirect),
                # Who vouches for the client: its metadata document's URL, or what it registered about itself.
                "clientUri": client.client_id if client.registration == METADATA_DOCUMENT else _text(client.client_uri),
                "registration": client.registration,
                "verified": client.verified_for(redirect),
                "redirectUri": redirect,
                "redirectExplicit": params.redirect_uri_provided_explicitly,
                "redirectHost": client.redirect_host(redirect),
                "state": params.state,
                "challenge": params.code_challenge,
                "scopes": params.scopes or list(oauth.SCOPES),
                "resource": params.resource.rstrip("/") if params.resource else request.resource,
                "createdAt": now,
                "expiresAt": now + oauth.REQUEST_SECONDS,
            },
        )
        return f"{request.base_url}/oauth/consent?request={request_id}"

    # -- tokens ------------------------------------------------------------------------------------

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> IssuedCode | None:
        code_hash = hash_token(authorization_code)
        values = await run_blocking(self._runtime.oauth.get_code, code_hash)
        if values is None:
            return None
        used = "usedAt" in values
        return IssuedCode(
            code=authorization_code,
            code_hash=code_hash,
            scopes=values["scopes"],
            # A used code is let through to the exchange, which revokes what its first use got.
            expires_at=time.time() + 60 if used else float(values["expiresAt"]),
            client_id=values["clientId"],
            code_challenge=values["challenge"],
            redirect_uri=values["redirectUri"],
            redirect_uri_provided_explicitly=values["redirectExplicit"],
            resource=values["resource"],
            account_id=values["accountId"],
            workspace_id=values["workspaceId"],
            grant_id=values["grantId"],
            used=used,
            grant=values["grant"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: IssuedCode
    ) -> OAuthToken:
        code = authorization_code
        if code.used:
            await self._revoke(code.account_id, code.workspace_id, code.grant_id)
            raise TokenError("invalid_grant", "this authorization code was used already; what it issued is revoked")
        now = self._now()
        grant = {**code.grant, "createdAt": iso(self._runtime.clock()), "refreshedAt": None}
        access, refresh, token = self._pair(grant, code.scopes, code.resource, now)
        grant |= {"accessHash": access[0], "refreshHash": refresh[0]}
        try:
            await run_blocking(
                self._runtime.oauth.redeem, code.code_hash, now, grant, access, refresh, oauth.GRANTS_PER_WORKSPACE
            )
        except Conflict as conflict:
            if conflict.reasons[:1] == ("ConditionalCheckFailed",):
                await self._revoke(code.account_id, code.workspace_id, code.grant_id)  # used twice at once
                raise TokenError("invalid_grant", "this authorization code was used already or has expired") from None
            raise TokenError(
                "invalid_grant",
                f"the workspace has {oauth.GRANTS_PER_WORKSPACE} connected apps, the most it may have; "
                "a person revokes one in the console first",
            ) from None
        if isinstance(client, RegisteredClient) and client.registration != METADATA_DOCUMENT:
            await run_blocking(self._runtime.oauth.keep_client, client.client_id)
        return token

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> HeldRefresh | None:
        token_hash = hash_token(refresh_token)
        values = await run_blocking(self._runtime.oauth.get_refresh, token_hash)
        if values is None:
            return None
        return HeldRefresh(token=refresh_token, token_hash=token_hash, rotated="rotatedAt" in values, **_held(values))

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: HeldRefresh, scopes: list[str]
    ) -> OAuthToken:
        held = refresh_token
        reused = TokenError("invalid_grant", "this refresh token was used already; the grant is revoked")
        if held.rotated:
            await self._revoke(held.account_id, held.workspace_id, held.grant_id)
            raise reused
        store = self._runtime.oauth
        grant = await run_blocking(store.get_grant, held.account_id, held.workspace_id, held.grant_id)
        if grant is None or grant["refreshHash"] != held.token_hash:
            raise TokenError("invalid_grant", "this app's sign-in was revoked; sign in again")
        now = self._now()
        access, refresh, token = self._pair(grant, oauth.normalize_scopes(" ".join(scopes)) or [], held.resource, now)
        try:
            await run_blocking(store.rotate, held.token_hash, grant, access, refresh, now)
        except Conflict:
            again = await run_blocking(store.get_refresh, held.token_hash)
            if again is not None and "rotatedAt" in again:  # spent by a concurrent use: a reuse all the same
                await self._revoke(held.account_id, held.workspace_id, held.grant_id)
                raise reused from None
            raise TokenError("invalid_grant", "this app's sign-in was revoked; sign in again") from None
        return token

    async def load_access_token(self, token: str) -> HeldAccess | None:
        values = await run_blocking(self._runtime.oauth.get_access, hash_token(token), self._now())
        if values is None:
            return None
        return HeldAccess(token=token, **_held(values))

    async def revoke_token(self, token: HeldAccess | HeldRefresh) -> None:
        """RFC 7009: either token ends the whole grant at once."""
        await self._revoke(token.account_id, token.workspace_id, token.grant_id)

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull, params: Any) -> OAuthToken:
        """SEP-990's enterprise grant is neither advertised nor accepted."""
        raise TokenError("unsupported_grant_type", "the JWT bearer grant is not supported here")

    async def _revoke(self, account_id: str, workspace_id: str, grant_id: str) -> None:
        await run_blocking(self._runtime.oauth.revoke_grant, account_id, workspace_id, grant_id)

    def _pair(
        self, grant: dict[str, Any], scopes: list[str], resource: str | None, now: int
    ) -> tuple[tuple[str, dict[str, Any]], tuple[str, dict[str, Any]], OAuthToken]:
        """A new access token (an agent token of the grant's workspace) and refresh token, as items and as sent."""
        access_token, refresh_token = new_token(TokenKind.AGENT), f"aw_refresh_{secrets.token_urlsafe(32)}"
        common = {
            "accountId": grant["accountId"],
            "workspaceId": grant["workspaceId"],
            "grantId": grant["id"],
            "clientId": grant["clientId"],
            "scopes": scopes,
            "resource": resource,
        }
        access = {
            **common,
            "tokenId": grant["id"],
            "kind": TokenKind.AGENT.value,
            "createdAt": iso(self._runtime.clock()),
            "expiresAt": now + oauth.ACCESS_SECONDS,
        }
        refresh = {**common, "createdAt": now, "expiresAt": now + oauth.REFRESH_SECONDS}
        token = OAuthToken(
            access_token=access_token,
            expires_in=oauth.ACCESS_SECONDS,
            scope=" ".join(scopes),
            refresh_token=refresh_token,
        )
        return (hash_token(access_token), access), (hash_token(refresh_token), refresh), token


def _held(values: dict[str, Any]) -> dict[str, Any]:
    """What an access or refresh token item says of its grant, as the SDK's token models name it."""
    return {
        "client_id": values["clientId"],
        "scopes": values["scopes"],
        "expires_at": int(values["expiresAt"]),
        "resource": values.get("resource"),
        "account_id": values["accountId"],
        "workspace_id": values["workspaceId"],
        "grant_id": values["grantId"],
    }
