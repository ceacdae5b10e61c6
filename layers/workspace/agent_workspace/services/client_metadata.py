"""OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization 2025-11-25).

A client whose `client_id` is an https URL is described by the JSON document at that URL. This is the one place the
server fetches a URL named by untrusted input, so the fetch is bounded: https only, public addresses only (checked,
then pinned, so DNS rebinding cannot swap them), no redirects, at most 5 KiB, at most 3 seconds. Stateless: the
caller caches.
"""

import http.client
import io
import ipaddress
import json
import socket
import ssl
import time
from collections.abc import Callable
from functools import cached_property
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

MAX_DOCUMENT_BYTES = 5 * 1024
MAX_SECONDS = 3.0
MAX_URL_CHARS = 512
MAX_REDIRECT_URIS = 20
MAX_CLIENT_NAME_CHARS = 200
USER_AGENT = "agent-workspace-client-metadata/1"
_MAX_RAW_BYTES = 64 * 1024  # status line + headers + body: http.client alone would take 100 lines of 64 KiB
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_EMBEDDING_IPV4 = tuple(
    ipaddress.ip_network(net) for net in ("::/96", "::ffff:0:0:0/96", "2002::/16", "64:ff9b:1::/48")
)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]


class ClientMetadataError(Exception):
    """Why a client's metadata document cannot be used, in words for the error page a human sees."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def is_metadata_document_url(client_id: str) -> bool:
    """Whether a `client_id` names a metadata document: https, a host, a path, no fragment, userinfo or dot segments."""
    if len(client_id) > MAX_URL_CHARS or not client_id.isascii() or any(c <= " " or c == "\x7f" for c in client_id):
        return False
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        return False
    segments = [unquote(s) for s in parts.path.split("/")]
    return (
        client_id.startswith("https://")
        and bool(parts.hostname)
        and "@" not in parts.netloc
        and "#" not in client_id
        and "\\" not in client_id
        and parts.path not in ("", "/")
        and not {".", ".."} & set(segments)
    )


def public_address(address: Address) -> bool:
    """The default rule: only an address on the public internet, never loopback, private, link-local or multicast,
    nor an IPv6 form that carries an IPv4 address some gateway may route to (IPv4-compatible, IPv4-translated,
    6to4, local-use NAT64): those are refused outright rather than unwrapped."""
    if isinstance(address, ipaddress.IPv6Address) and any(address in net for net in _EMBEDDING_IPV4):
        return False
    return address.is_global and not address.is_multicast


def _unwrap(address: Address) -> Address:
    """The IPv4 address inside an IPv4-mapped or NAT64 IPv6 address, which is where a connection to it would go."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


class _Oversized(Exception):
    """More bytes than any answer carrying a 5 KiB document needs."""


class _Pinned(io.RawIOBase):
    """What http.client needs of a socket, over the TLS socket to the checked address (it never resolves or
    connects), reading until the deadline however slowly bytes trickle: a socket timeout bounds one read, not all."""

    def __init__(self, sock: ssl.SSLSocket, deadline: float) -> None:
        self._sock, self._deadline, self._read = sock, deadline, 0

    def _remaining(self) -> float:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        return remaining

    def sendall(self, data: bytes) -> None:
        self._sock.settimeout(self._remaining())
        self._sock.sendall(data)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self)

    def close(self) -> None:
        """Nothing: http.client closes its "socket" while the response still reads; the TLS socket's owner closes it."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._read > _MAX_RAW_BYTES:
            raise _Oversized
        self._sock.settimeout(self._remaining())
        count = self._sock.recv_into(buffer)
        self._read += count
        return count


class MetadataFetcher:
    """Fetches one metadata document within the bounds above; each part is injectable so tests can reach loopback."""

    def __init__(
        self,
        resolver: Resolver = socket.getaddrinfo,
        address_allowed: Callable[[Address], bool] = public_address,
        ssl_context: ssl.SSLContext | None = None,
        deadline_seconds: float = MAX_SECONDS,
    ) -> None:
        self._resolve, self._allowed = resolver, address_allowed
        self._given_context = ssl_context
        self._seconds = deadline_seconds

    @cached_property
    def _context(self) -> ssl.SSLContext:
        """Made on the first fetch: loading the system's CA certificates takes ~20 ms; most processes never fetch."""
        return self._given_context or ssl.create_default_context()

    def fetch(self, url: str) -> dict[str, Any]:
        """The JSON object at `url`, or ClientMetadataError saying why not; no other exception escapes."""
        fail = f"the client's metadata document at {url} could not be fetched"
        if not is_metadata_document_url(url):
            raise ClientMetadataError(f"{fail}: it is not an https URL with a path (and no fragment or user name)")
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 443
        try:  # the system resolver's own timeouts bound the lookup; the deadline starts at the connection
            found = self._resolve(host, port, 0, socket.SOCK_STREAM)
            if not found:
                raise OSError("no address")
        except (OSError, UnicodeError) as error:  # UnicodeError: a name IDNA cannot encode
            raise ClientMetadataError(f"{fail}: its host name {host} does not resolve") from error
        if not all(self._allows(sockaddr[0]) for *_, sockaddr in found):
            raise ClientMetadataError(f"{fail}: its host name {host} leads to an address that is not public")
        try:
            body = self._exchange(fail, parts, found, time.monotonic() + self._seconds)
        except TimeoutError as error:
            raise ClientMetadataError(f"{fail}: it did not answer within {self._seconds:g} seconds") from error
        except ssl.SSLCertVerificationError as error:
            raise ClientMetadataError(f"{fail}: its TLS certificate is not valid ({error.verify_message})") from error
        except ssl.SSLError as error:
            raise ClientMetadataError(f"{fail}: the TLS handshake failed") from error
        except OSError as error:
            raise ClientMetadataError(f"{fail}: the connection failed ({error.strerror or error})") from error
        except (http.client.HTTPException, ValueError) as error:  # ValueError: http.client on a malformed answer
            raise ClientMetadataError(f"{fail}: it did not answer in valid HTTP") from error
        except _Oversized as error:
            raise ClientMetadataError(f"{fail}: its answer is larger than {_MAX_RAW_BYTES // 1024} KiB") from error
        try:  # 5 KiB bounds the work and the depth; nesting past the interpreter's limit is a RecursionError
            document = json.loads(body.decode("utf-8"))
        except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            raise ClientMetadataError(f"{fail}: it is not valid JSON") from error
        except RecursionError as error:
            raise ClientMetadataError(f"{fail}: it is nested too deeply") from error
        if not isinstance(document, dict):
            raise ClientMetadataError(f"{fail}: it is JSON but not a JSON object")
        return document

    def _allows(self, host: str) -> bool:
        """Whether the rule allows a resolved address, judged where a connection to it would really go."""
        try:
            return self._allowed(_unwrap(ipaddress.ip_address(host)))
        except ValueError:  # not an address at all: nothing to vouch for
            return False

    def _exchange(self, fail: str, parts: SplitResult, found: list[tuple[Any, ...]], deadline: float) -> bytes:
        """One GET over TLS to the first checked address that connects; the body, if it may be used."""
        sock = self._connect(found, deadline)
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        with self._context.wrap_socket(sock, server_hostname=parts.hostname) as tls:
            connection = http.client.HTTPSConnection(parts.hostname or "", parts.port or 443, context=self._context)
            connection.sock = _Pinned(tls, deadline)  # pinned: http.client never calls connect()
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", path, headers={"Accept": "application/json", "User-Agent": USER_AGENT})
            response = connection.getresponse()
            if 300 <= response.status < 400:
                raise ClientMetadataError(f"{fail}: it redirects, and redirects are not followed")
            if response.status != 200:
                raise ClientMetadataError(f"{fail}: it answered with status {response.status}, not 200")
            media = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
            if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
                raise ClientMetadataError(f"{fail}: its content type is {media or 'missing'}, not JSON")
            body = b""  # one byte more than allowed tells a document that is too large
            while len(body) <= MAX_DOCUMENT_BYTES and (chunk := response.read(MAX_DOCUMENT_BYTES + 1 - len(body))):
                body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise ClientMetadataError(f"{fail}: it is larger than {MAX_DOCUMENT_BYTES // 1024} KiB")
            return body

    def _connect(self, found: list[tuple[Any, ...]], deadline: float) -> socket.socket:
        """A TCP connection to one of the addresses already checked: no second lookup between check and use."""
        error: OSError = OSError("no address to connect to")
        for family, kind, proto, _, sockaddr in found:
            if time.monotonic() >= deadline:
                raise TimeoutError("deadline passed")
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                sock.connect(sockaddr)
                return sock
            except OSError as failed:
                sock.close()
                error = failed
        raise error


def validate_document(url: str, document: dict[str, Any]) -> dict[str, Any]:
    """The fields we use from a fetched document, after the draft's rules and ours; refuses rather than trims."""

    def refuse(field: str, why: str) -> ClientMetadataError:
        return ClientMetadataError(f"the client's metadata document at {url} is not usable: {field} {why}", field)

    def strings(field: str, most: int) -> list[str] | None:
        value = document.get(field)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise refuse(field, "must be a list of strings")
        if value is not None and len(value) > most:
            raise refuse(field, f"lists {len(value)} entries; at most {most} are accepted")
        return value

    if document.get("client_id") != url:
        raise refuse("client_id", "does not match the URL the document was fetched from")
    for secret in ("client_secret", "client_secret_expires_at"):
        if secret in document:
            raise refuse(secret, "is present; a metadata document is public and must not hold a secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method == "private_key_jwt":
        raise refuse("token_endpoint_auth_method", "is private_key_jwt, which this server does not support")
    if method != "none":
        raise refuse(
            "token_endpoint_auth_method", f"is {str(method)[:40]!r}; only 'none' (a public client) is accepted"
        )
    redirect_uris = strings("redirect_uris", MAX_REDIRECT_URIS)
    if not redirect_uris:
        raise refuse("redirect_uris", "must list at least one redirect URI")
    for field in ("client_name", "client_uri", "logo_uri", "scope"):
        if document.get(field) is not None and not isinstance(document[field], str):
            raise refuse(field, "must be a string")
    if len(document.get("client_name") or "") > MAX_CLIENT_NAME_CHARS:
        raise refuse("client_name", f"is longer than {MAX_CLIENT_NAME_CHARS} characters")
    cleaned: dict[str, Any] = {"client_id": url, "redirect_uris": redirect_uris, "token_endpoint_auth_method": "none"}
    cleaned |= {f: document[f] for f in ("client_name", "client_uri", "scope") if document.get(f) is not None}
    cleaned |= {f: v for f in ("grant_types", "response_types") if (v := strings(f, 10)) is not None}
    return cleaned
