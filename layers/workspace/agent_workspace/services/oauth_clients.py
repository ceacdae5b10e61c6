"""Who is signing in: clients registered here (RFC 7591) or known by their metadata document (CIMD).

The SDK's client model compares redirect URIs exactly and holds a plaintext secret; ours lets a loopback port vary
(RFC 8252 §7.3), folds the agent repo's scope names, and keeps only a hash of a client secret.
"""

import hashlib
import hmac
import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import RegistrationError
from mcp.shared.auth import InvalidRedirectUriError, InvalidScopeError, OAuthClientInformationFull
from pydantic import AnyUrl, PrivateAttr, ValidationError

from agent_workspace.domain import oauth
from agent_workspace.domain.tokens import hash_token
from agent_workspace.runtime import Runtime
from agent_workspace.services.client_metadata import (
    ClientMetadataError,
    MetadataFetcher,
    is_metadata_document_url,
    validate_document,
)

DYNAMIC, METADATA_DOCUMENT = "dynamic", "metadata-document"


class RegisteredClient(OAuthClientInformationFull):
    """A client as this server knows it; `client_secret` is never set (only `secret_hash`)."""

    _registration: str = PrivateAttr(DYNAMIC)
    _secret_hash: str | None = PrivateAttr(None)

    @property
    def registration(self) -> str:
        return self._registration

    def secret_matches(self, presented: str | None) -> bool:
        if self._secret_hash is None:
            return True
        return presented is not None and hmac.compare_digest(self._secret_hash, hash_token(presented))

    @property
    def needs_secret(self) -> bool:
        return self._secret_hash is not None

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        registered = [str(uri) for uri in self.redirect_uris or []]
        if redirect_uri is None:
            if len(registered) == 1:
                return AnyUrl(registered[0])
            raise InvalidRedirectUriError("redirect_uri must be given: this client registered several")
        if not any(oauth.redirect_matches(uri, str(redirect_uri)) for uri in registered):
            raise InvalidRedirectUriError(f"redirect URI {str(redirect_uri)!r} is not registered for this client")
        return redirect_uri

    def validate_scope(self, requested_scope: str | None) -> list[str] | None:
        scopes = oauth.normalize_scopes(requested_scope)
        unknown = [scope for scope in scopes or [] if scope not in oauth.SCOPES]
        if unknown:
            raise InvalidScopeError(f"unknown scope {unknown[0]!r}; scopes: {' '.join(oauth.SCOPES)}")
        return scopes

    def redirect_host(self, redirect_uri: str) -> str:
        parts = urlsplit(redirect_uri)
        return parts.hostname or f"{parts.scheme}:"

    def verified_for(self, redirect_uri: str) -> bool:
        """A metadata document's name and redirects were served by the client_id's own https host, so a redirect to
        that host is the client's. Anyone may serve a document naming itself anything with a loopback redirect, and a
        dynamically registered client asserted its name itself: neither is verified."""
        if self._registration != METADATA_DOCUMENT:
            return False
        return urlsplit(redirect_uri).hostname == urlsplit(self.client_id).hostname


def redirect_problems(uris: list[str]) -> str | None:
    if len(uris) > oauth.REDIRECT_URIS_MAX:
        return f"at most {oauth.REDIRECT_URIS_MAX} redirect URIs"
    return next((problem for uri in uris if (problem := oauth.redirect_uri_problem(uri))), None)


class ClientDirectory:
    """Finds and registers clients, in the table; metadata documents are fetched once an hour at most."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._fetcher = MetadataFetcher()

    def _now(self) -> int:
        return int(self._runtime.clock().timestamp())

    def find(self, client_id: str, source: str) -> RegisteredClient:
        """The client, or `LookupError` with why not (shown on the sign-in error page)."""
        if is_metadata_document_url(client_id):
            return self._from_document(client_id, source)
        if len(client_id) > 64:
            raise LookupError("unknown client")
        stored = self._runtime.oauth.get_client(client_id, self._now())
        if stored is None:
            raise LookupError(f"unknown client {client_id!r}: register it first (or it expired unused)")
        return _client(json.loads(stored["metadata"]), DYNAMIC, stored.get("secretHash"))

    def _from_document(self, url: str, source: str) -> RegisteredClient:
        """The client its document describes: fetched at most hourly, a known one uncounted and, should the fetch
        fail, served as last fetched; an unknown one counts against the document budget."""
        url_hash = hashlib.sha256(url.encode()).hexdigest()
        now = self._now()
        cached = self._runtime.oauth.get_document(url_hash, now)
        if cached is not None and "problem" in cached:
            raise LookupError(cached["problem"])
        if cached is not None and int(cached["freshUntil"]) > now:
            return _client(json.loads(cached["metadata"]), METADATA_DOCUMENT, None)
        if cached is None and not self.admit("document", source):
            raise LookupError("too many new clients from this address or in all; try again later")
        try:
            metadata, client = self._fetched(url)
        except ClientMetadataError as error:
            if cached is not None:
                return _client(json.loads(cached["metadata"]), METADATA_DOCUMENT, None)
            # Remembered briefly too, so a broken or hostile document is not fetched again on every request.
            self._runtime.oauth.put_document(url_hash, {"problem": str(error), "expiresAt": now + 300})
            raise LookupError(str(error)) from None
        fresh = {"metadata": json.dumps(metadata), "freshUntil": now + oauth.METADATA_CACHE_SECONDS}
        self._runtime.oauth.put_document(url_hash, fresh | {"expiresAt": now + oauth.DOCUMENT_KEPT_SECONDS})
        return client

    def _fetched(self, url: str) -> tuple[dict[str, Any], RegisteredClient]:
        """The document's metadata as this server keeps it and the client it makes, or `ClientMetadataError` for
        anything unusable (checked before it is kept: a cached document that is no client would fail every use)."""
        document = validate_document(url, (self._runtime.fetch_client_metadata or self._fetcher.fetch)(url))
        problem = redirect_problems(list(document.get("redirect_uris", [])))
        if problem:
            raise ClientMetadataError(f"the client's metadata document at {url}: {problem}")
        metadata = {**_kept(document), "token_endpoint_auth_method": "none", "scope": " ".join(oauth.SCOPES)}
        try:
            return metadata, _client(metadata, METADATA_DOCUMENT, None)
        except ValidationError as error:
            field = ".".join(str(part) for part in error.errors()[0]["loc"])
            raise ClientMetadataError(f"the client's metadata document at {url}: {field} is not valid") from None

    def register(self, client: OAuthClientInformationFull) -> None:
        """Store a dynamically registered client, its secret as a hash; refused with RFC 7591's error codes."""
        problem = redirect_problems([str(uri) for uri in client.redirect_uris or []])
        if problem:
            raise RegistrationError("invalid_redirect_uri", problem)
        if client.client_name is not None and len(client.client_name) > oauth.CLIENT_NAME_MAX:
            too_long = f"client_name is over {oauth.CLIENT_NAME_MAX} characters"
            raise RegistrationError("invalid_client_metadata", too_long)
        scopes = oauth.normalize_scopes(client.scope) or list(oauth.SCOPES)
        metadata = _kept(client.model_dump(mode="json", exclude_none=True)) | {"scope": " ".join(scopes)}
        now = self._now()
        record: dict[str, Any] = {
            "metadata": json.dumps(metadata),
            "createdAt": now,
            "expiresAt": now + oauth.UNUSED_CLIENT_SECONDS,
        }
        if client.client_secret:
            record["secretHash"] = hash_token(client.client_secret)
        self._runtime.oauth.put_client(client.client_id, record)

    def admit(self, kind: str, source: str) -> bool:
        """Count one unauthenticated request that stores something: a registration or a first document fetch
        (per hour, per address and in all), or an authorization request (per minute, per address)."""
        now = self._now()
        store = self._runtime.oauth
        address = f"{kind}#address#{_network(source)}"
        if kind == "authorize":
            minute = now // 60
            return store.count_registration(
                address, minute, oauth.AUTHORIZATIONS_PER_MINUTE_PER_ADDRESS, minute * 60 + 120
            )
        hour = now // 3600
        per_address, in_all = _HOURLY[kind]
        return store.count_registration(address, hour, per_address, hour * 3600 + 7200) and store.count_registration(
            f"{kind}#all", hour, in_all, hour * 3600 + 7200
        )


_HOURLY = {
    "register": (oauth.REGISTRATIONS_PER_HOUR_PER_ADDRESS, oauth.REGISTRATIONS_PER_HOUR),
    "document": (oauth.DOCUMENTS_PER_HOUR_PER_ADDRESS, oauth.DOCUMENTS_PER_HOUR),
}
# What is kept of a client's metadata: what sign-in uses and shows, nothing else a registration may carry.
_KEPT = (
    "client_id",
    "client_name",
    "client_uri",
    "redirect_uris",
    "grant_types",
    "response_types",
    "scope",
    "token_endpoint_auth_method",
    "client_id_issued_at",
    "client_secret_expires_at",
    "application_type",
)


def _kept(metadata: dict[str, Any]) -> dict[str, Any]:
    return {name: metadata[name] for name in _KEPT if name in metadata}


def _network(source: str) -> str:
    """Who a source address is, for counting: an IPv6 address by its /64 (one host usually holds a whole /64)."""
    try:
        address = ipaddress.ip_address(source)
    except ValueError:
        return source[:64]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) else str(address)


def _client(metadata: dict[str, Any], registration: str, secret_hash: str | None) -> RegisteredClient:
    client = RegisteredClient.model_validate(metadata)
    client._registration = registration
    client._secret_hash = secret_hash
    return client
