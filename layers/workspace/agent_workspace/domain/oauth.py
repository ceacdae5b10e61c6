"""OAuth 2.1 sign-in rules: scopes, lifetimes, caps and which redirect URIs a client may register.

The server is its own authorization server (MCP authorization spec): an app signs in as an agent of one workspace
the human picks. These rules are shared by registration, the consent page and the token endpoint.
"""

import ipaddress
import re
from urllib.parse import urlsplit

# The agent repo's reference names its scopes radars:read, radars:write and radars:manage; here they are plain.
READ, WRITE, MANAGE = "read", "write", "manage"
SCOPES = (READ, WRITE, MANAGE)
SCOPE_ALIASES = {f"radars:{scope}": scope for scope in SCOPES}
SCOPE_TEXTS = {
    READ: "read tasks, memory, skills, the board and agents",
    WRITE: "create and change them",
    MANAGE: "change the @handle of the account's own agents (the owner's decision otherwise)",
}

CODE_SECONDS = 300  # an authorization code is exchanged at once by its client; five minutes is generous
REQUEST_SECONDS = 600  # the human has ten minutes on the consent page
ACCESS_SECONDS = 3600
REFRESH_SECONDS = 30 * 24 * 3600  # a refresh token unused this long is dead; each use makes a new one
UNUSED_CLIENT_SECONDS = 24 * 3600  # a registered client that never gets a grant is deleted (TTL)
METADATA_CACHE_SECONDS = 3600  # a client metadata document is fetched again after an hour

# Registration is unauthenticated: bounded per source address (an IPv6 /64 counts as one) and in all, per hour, the
# address's share well below the whole. With unused clients expiring after a day, at most REGISTRATIONS_PER_HOUR * 24
# unused clients exist at once. First fetches of client metadata documents have a budget of their own, so a flood of
# registrations never locks out a client known by its document (a known document is fetched again uncounted).
REGISTRATIONS_PER_HOUR_PER_ADDRESS = 20
REGISTRATIONS_PER_HOUR = 300
DOCUMENTS_PER_HOUR_PER_ADDRESS = 20
DOCUMENTS_PER_HOUR = 300
DOCUMENT_KEPT_SECONDS = 30 * 24 * 3600  # a known document is kept this long, served stale when a fetch fails
AUTHORIZATIONS_PER_MINUTE_PER_ADDRESS = 30  # each stores a consent request for ten minutes
REGISTRATION_BYTES = 8 * 1024
STATE_MAX = 1024
GRANTS_PER_WORKSPACE = 32  # connected apps: each holds a token with its own rate limit, like an agent token
REDIRECT_URIS_MAX = 20
REDIRECT_URI_MAX = 512
CLIENT_NAME_MAX = 200

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
# Native apps that use a private-use scheme not in reverse-DNS form (RFC 8252 §7.1 asks for one); anything else
# without a dot is refused, so no browser- or OS-special scheme (javascript:, data:, file:, ...) is ever a target.
NATIVE_APP_SCHEMES = frozenset({"cursor", "vscode", "vscode-insiders", "windsurf", "claude"})
_REVERSE_DNS_SCHEME = re.compile(r"[a-z][a-z0-9-]*(\.[a-z0-9-]+)+")


def normalize_scopes(requested: str | None) -> list[str] | None:
    """The canonical scopes of a space-separated request (aliases folded, order kept, repeats dropped)."""
    if requested is None:
        return None
    names = [SCOPE_ALIASES.get(name, name) for name in requested.split()]
    return list(dict.fromkeys(names))


def may_manage(granted: frozenset[str] | None) -> bool:
    """Whether a connection was granted the agent repo's owner-level changes: an app signed in with `manage`. A token
    minted in the console holds every scope for what an agent does, not this: the @handle stays the person's."""
    return granted is not None and MANAGE in granted


def scope_refusal(granted: frozenset[str] | None, needed: str) -> str | None:
    """Why an app signed in with `granted` scopes may not do what needs `needed` (None: it may, or it holds an agent
    token minted in the console, which has every scope). Worded with OAuth's error code, for the agent to act on."""
    if granted is None or needed in granted:
        return None
    held = ", ".join(sorted(granted)) or "none"
    return (
        f"insufficient_scope: this needs the '{needed}' scope, and this app's sign-in granted {held}; "
        f"sign in again and allow '{needed}'"
    )


def redirect_uri_problem(uri: str) -> str | None:
    """Why `uri` may not be a redirect URI (None if it may): https, loopback http on any port (RFC 8252 §7.3),
    or a native app's private-use scheme (§7.1); never a fragment, never userinfo."""
    if len(uri) > REDIRECT_URI_MAX:
        return f"a redirect URI is longer than {REDIRECT_URI_MAX} characters"
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"redirect URI {uri!r} is not a URL"
    if "#" in uri:
        return f"redirect URI {uri!r} has a fragment, which OAuth forbids"
    if "@" in parts.netloc:
        return f"redirect URI {uri!r} carries user information"
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None if parts.hostname else f"redirect URI {uri!r} has no host"
    if scheme == "http":
        if is_loopback(parts.hostname):
            return None
        return f"redirect URI {uri!r} is plain http to a host other than this computer: only loopback may use http"
    if scheme in NATIVE_APP_SCHEMES or _REVERSE_DNS_SCHEME.fullmatch(scheme):
        return None
    allowed = "https, loopback http, or an app's own"
    return f"redirect URI {uri!r}: the scheme {scheme or '(none)'!r} is not allowed ({allowed})"


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def redirect_matches(registered: str, requested: str) -> bool:
    """Exact match, except that a loopback redirect's port may differ (RFC 8252 §7.3: native apps pick a free one)."""
    if registered == requested:
        return True
    a, b = urlsplit(registered), urlsplit(requested)
    if a.scheme != "http" or b.scheme != "http" or not is_loopback(a.hostname):
        return False
    return (a.hostname, a.path, a.query) == (b.hostname, b.path, b.query)
