"""The OAuth 2.1 authorization server of the MCP authorization spec, made of the MCP SDK's handlers.

The SDK's authorize, token, registration and revocation handlers run unchanged over `WorkspaceOAuthProvider`. Added
here: the metadata documents, built per request (the issuer is the public URL, which a Function URL learns only from
its requests), the request context the provider needs (issuer, caller's address), a client authenticator that
compares secret hashes, bounds on registration, and an HTML error page where the SDK would answer a browser in JSON.
"""

import base64
import binascii
import html
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, unquote, urlsplit

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.revoke import RevocationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive

from agent_workspace.blocking import run_blocking
from agent_workspace.domain import oauth
from agent_workspace.runtime import Runtime
from agent_workspace.services.oauth_clients import ClientDirectory, RegisteredClient, redirect_problems
from agent_workspace.services.oauth_provider import CURRENT, OAuthRequest, WorkspaceOAuthProvider
from agent_workspace.web.auth import METADATA_PATH, SERVER_METADATA_PATH, base_url

_REGISTRATION = ClientRegistrationOptions(
    enabled=True, valid_scopes=[*oauth.SCOPES, *oauth.SCOPE_ALIASES], default_scopes=list(oauth.SCOPES)
)
_REVOCATION = RevocationOptions(enabled=True)
_AUTH_METHODS = ["none", "client_secret_post", "client_secret_basic"]
_METADATA_HEADERS = {"Cache-Control": "public, max-age=3600"}


class HashedSecretAuthenticator(ClientAuthenticator):
    """The SDK's authenticator compares a stored plaintext secret; only a secret's hash is stored here."""

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        client = await self.provider.get_client(client_id)
        if not isinstance(client, RegisteredClient):
            raise AuthenticationError("Invalid client_id")
        presented = _presented_secret(request, form.get("client_secret"), client_id) if client.needs_secret else None
        if not client.secret_matches(presented):
            raise AuthenticationError("Invalid client_secret")
        return client


def _presented_secret(request: Request, posted: object, client_id: str) -> str | None:
    """The secret from HTTP Basic (RFC 6749 §2.3.1, URL-encoded parts) or else the form."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            user, _, secret = base64.b64decode(credentials, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise AuthenticationError("Invalid Basic authentication header") from None
        if unquote(user) != client_id:
            raise AuthenticationError("Client ID mismatch in Basic auth")
        return unquote(secret)
    return posted if isinstance(posted, str) else None


class OAuthServer:
    def __init__(self, runtime: Runtime, resource_paths: tuple[str, ...] = ("/mcp",)) -> None:
        """`resource_paths`: the MCP paths a token may be asked for (RFC 8707); each is one of this server's."""
        self._runtime = runtime
        self._resource_paths = resource_paths
        self.provider = WorkspaceOAuthProvider(runtime, ClientDirectory(runtime))
        authenticator = HashedSecretAuthenticator(self.provider)
        self._authorize = AuthorizationHandler(self.provider)
        self._token = TokenHandler(self.provider, authenticator)
        self._register = RegistrationHandler(self.provider, _REGISTRATION)
        self._revoke = RevocationHandler(self.provider, authenticator)

    def routes(self) -> list[Route]:
        def cross_origin(path: str, handler: Callable[[Request], Awaitable[Response]], method: str) -> Route:
            return Route(path, cors_middleware(handler, [method, "OPTIONS"]), methods=[method, "OPTIONS"])

        return [
            cross_origin(SERVER_METADATA_PATH, self.server_metadata, "GET"),
            cross_origin(METADATA_PATH, self.resource_metadata, "GET"),
            *(cross_origin(f"{METADATA_PATH}{path}", self.resource_metadata, "GET") for path in self._resource_paths),
            Route("/authorize", self.authorize, methods=["GET", "POST"]),  # navigated to: no CORS
            cross_origin("/token", self.token, "POST"),
            cross_origin("/register", self.register, "POST"),
            cross_origin("/revoke", self.revoke, "POST"),
        ]

    @contextmanager
    def _context(self, request: Request) -> Iterator[None]:
        reset = CURRENT.set(OAuthRequest(base_url(self._runtime, request), _source(request), self._resource_paths))
        try:
            yield
        finally:
            CURRENT.reset(reset)

    async def server_metadata(self, request: Request) -> Response:
        """RFC 8414, from the SDK's builder; public clients (`none`), metadata documents and `iss` added."""
        issuer = base_url(self._runtime, request)
        metadata = build_metadata(AnyHttpUrl(issuer), None, _REGISTRATION, _REVOCATION).model_dump(
            mode="json", exclude_none=True
        )
        metadata |= {
            "issuer": issuer,  # exactly as `iss` and the resource metadata name it (RFC 8414 §3.3)
            "scopes_supported": list(oauth.SCOPES),
            "token_endpoint_auth_methods_supported": _AUTH_METHODS,
            "revocation_endpoint_auth_methods_supported": _AUTH_METHODS,
            "client_id_metadata_document_supported": True,
            "authorization_response_iss_parameter_supported": True,
        }
        return JSONResponse(metadata, headers=_METADATA_HEADERS)

    async def resource_metadata(self, request: Request) -> Response:
        """RFC 9728: an MCP path is protected, takes a bearer token in the header, and this server issues it. At
        the well-known root, and inserted before each path (§3.1): /.well-known/oauth-protected-resource/mcp/omr."""
        base = base_url(self._runtime, request)
        path = request.url.path.removeprefix(METADATA_PATH) or "/mcp"
        metadata = ProtectedResourceMetadata(
            resource=AnyHttpUrl(f"{base}{path}"),
            authorization_servers=[AnyHttpUrl(base)],
            scopes_supported=list(oauth.SCOPES),
            resource_name="Agent Workspace",
            resource_documentation=AnyHttpUrl(f"{base}/openapi.json"),
        ).model_dump(mode="json", exclude_none=True)
        metadata |= {"resource": f"{base}{path}", "authorization_servers": [base]}  # spelled exactly, no slash added
        return JSONResponse(metadata, headers=_METADATA_HEADERS)

    async def authorize(self, request: Request) -> Response:
        """The SDK's handler, with a page that says why where it would answer the browser with JSON (unknown client,
        unregistered redirect) or send an error to a redirect URI nobody vouches for (RFC 9700 §4.11.2: a client
        anyone registered must not make this server an open redirector). Bounded per address: each request stores
        a consent request."""
        if not await run_blocking(self.provider.directory.admit, "authorize", _source(request)):
            return error_page("too many sign-in requests from this address; wait a minute", "temporarily_unavailable")
        self.provider.last_problem.set(None)
        self.provider.last_client.set(None)
        with self._context(request):
            response = await self._authorize.handle(request)
        if response.status_code == 302:
            return self._unless_untrusted(response)
        answer = json.loads(bytes(response.body))
        why = self.provider.last_problem.get() or answer.get("error_description") or answer.get("error", "")
        return error_page(str(why), answer.get("error", "invalid_request"))

    def _unless_untrusted(self, response: Response) -> Response:
        """An error redirect goes only to this computer or to a metadata-document client's own host."""
        target = response.headers["location"]
        sent = parse_qs(urlsplit(target).query)
        client = self.provider.last_client.get()
        if "error" not in sent or oauth.is_loopback(urlsplit(target).hostname):
            return response
        if client is not None and client.verified_for(target):
            return response
        why = sent.get("error_description", sent["error"])[0]
        return error_page(why, sent["error"][0])

    async def token(self, request: Request) -> Response:
        with self._context(request):
            return await self._token.handle(request)

    async def revoke(self, request: Request) -> Response:
        """RFC 7009 through the SDK. Its request model requires `client_secret` even of a public client (which has
        none to send), so an absent one is passed on as empty, which only a public client passes with."""
        body = await request.body()
        if "client_secret" not in parse_qs(body.decode("latin-1")):
            body += b"&client_secret="
            request = Request(request.scope, _replay(body))
        with self._context(request):
            return await self._revoke.handle(request)

    async def register(self, request: Request) -> Response:
        """RFC 7591 through the SDK, after this server's bounds: redirect URIs it accepts, and the rate."""
        body = await request.body()
        if len(body) > oauth.REGISTRATION_BYTES:
            too_large = f"a registration is at most {oauth.REGISTRATION_BYTES:,} bytes"
            return JSONResponse({"error": "invalid_client_metadata", "error_description": too_large}, status_code=400)
        problem = _redirect_problem(body)
        if problem:
            return JSONResponse({"error": "invalid_redirect_uri", "error_description": problem}, status_code=400)
        if not await run_blocking(self.provider.directory.admit, "register", _source(request)):
            return JSONResponse(
                {"error": "temporarily_unavailable", "error_description": "too many registrations; retry later"},
                status_code=429,
                headers={"Retry-After": "600"},
            )
        with self._context(request):
            return await self._register.handle(request)


def _source(request: Request) -> str:
    """The caller's address as the Function URL (through Mangum) or uvicorn saw it; never a forwarded-for header."""
    return request.client.host if request.client else "unknown"


def _replay(body: bytes) -> Receive:
    async def receive() -> Message:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _redirect_problem(body: bytes) -> str | None:
    """Why the registration's redirect URIs are refused, read before the SDK parses them (it would take any URL,
    `javascript:` included, or call a malformed one invalid metadata rather than an invalid redirect URI)."""
    try:
        uris = json.loads(body).get("redirect_uris")
    except (ValueError, AttributeError, RecursionError):
        return None  # not a JSON object: the SDK says so
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        return None
    return redirect_problems(uris)


def error_page(why: str, error: str) -> HTMLResponse:
    """A sign-in that cannot go back to the app safely: said to the person, with the console's look."""
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Sign-in refused · Agent Workspace</title>
<link rel="stylesheet" href="/console/style.css"></head>
<body><header class="bar"><h1>Agent Workspace</h1></header>
<main id="main"><section class="card narrow" aria-labelledby="refused-h">
<h2 id="refused-h">Sign-in refused</h2>
<p role="alert">{html.escape(why)}</p>
<p class="hint">Error: <code>{html.escape(error)}</code>. Nothing was sent back to the app. Start the sign-in again
from the app; if it keeps failing, its registration or redirect address is not one this server accepts.</p>
</section></main></body></html>"""
    return HTMLResponse(body, status_code=400, headers={"Cache-Control": "no-store"})
