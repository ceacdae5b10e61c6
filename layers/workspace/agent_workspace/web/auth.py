"""Bearer-token authentication shared by /mcp and /api.

Tokens are accepted only in the Authorization header: a token in the query string is ignored, so
it never lands in access logs.
"""

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection

from agent_workspace.domain.errors import Forbidden, RateLimited, Unauthorized, Unavailable, WorkspaceError
from agent_workspace.domain.models import Principal
from agent_workspace.domain.tokens import TokenKind, hash_token
from agent_workspace.runtime import Runtime

METADATA_PATH = "/.well-known/oauth-protected-resource"
SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server"
# Sign-in's endpoints an OAuth client calls from any origin (a browser-based client such as the MCP Inspector): they
# use no cookie, so the SDK answers them with CORS for every origin, and `api.guard` lets any Origin through to them.
CROSS_ORIGIN_PATHS = frozenset({SERVER_METADATA_PATH, METADATA_PATH, "/token", "/register", "/revoke"})


def bearer_token(headers: Headers) -> str | None:
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def authenticate(runtime: Runtime, headers: Headers, kind: TokenKind | None) -> Principal:
    """The principal behind the request's token, which must be of `kind` (None: either kind, for a route that
    checks what each kind may do itself)."""
    token = bearer_token(headers)
    if token is None:
        raise Unauthorized("missing bearer token: send Authorization: Bearer <token>")
    now = runtime.clock().timestamp()
    window = int(now // 60)
    try:
        principal = runtime.accounts.admit(hash_token(token), now, runtime.settings.rate_limit_per_minute)
    except RateLimited as limited:
        limited.retry_after = max(1, int((window + 1) * 60 - now) + 1)  # until the next minute begins
        raise
    if principal is None:
        raise Unauthorized("unknown or revoked token")
    if kind is not None and principal.kind is not kind:
        needed = "an agent token (MCP)" if kind is TokenKind.AGENT else "a human token (REST API)"
        raise Forbidden(f"this endpoint needs {needed}")
    return principal


def presented_token_hash(headers: Headers) -> str:
    """The hash of the bearer token a request authenticated with (how the token item is keyed): what a push ticket
    is bound to, so the socket it opens checks that very token is still live."""
    token = bearer_token(headers)
    assert token is not None, "called after authenticate()"
    return hash_token(token)


def base_url(runtime: Runtime, connection: HTTPConnection) -> str:
    if runtime.settings.public_url:
        return runtime.settings.public_url.rstrip("/")
    proto = connection.headers.get("x-forwarded-proto", connection.url.scheme)
    return f"{proto}://{connection.headers.get('host', connection.url.netloc)}"


def www_authenticate(runtime: Runtime, connection: HTTPConnection) -> str:
    """Where to learn how to sign in (RFC 9728); with `invalid_token` (RFC 6750 §3.1) when a token was sent but
    is unknown, revoked or expired, which tells a signed-in app to refresh it."""
    invalid = 'error="invalid_token", ' if bearer_token(connection.headers) else ""
    path = connection.url.path.rstrip("/")
    metadata = f"{METADATA_PATH}{path}" if path.startswith("/mcp/") else METADATA_PATH  # RFC 9728 §3.1, per path
    return f'Bearer {invalid}resource_metadata="{base_url(runtime, connection)}{metadata}"'


def error_headers(runtime: Runtime, connection: HTTPConnection, error: WorkspaceError) -> dict[str, str]:
    """The headers an error's HTTP answer carries, the same on /api and /mcp: how to authenticate after a 401,
    when to come back after a 429 or a 503 (a store busy or out of reach)."""
    if isinstance(error, Unauthorized):
        return {"WWW-Authenticate": www_authenticate(runtime, connection)}
    if isinstance(error, RateLimited | Unavailable):
        return {"Retry-After": str(error.retry_after)}
    return {}
